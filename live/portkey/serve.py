"""Run the Portkey AI gateway built by build.py on 127.0.0.1; each request names its backend.

`python live/portkey/serve.py` prints the gateway's base URL and serves until SIGINT/SIGTERM;
`--check --backend-url URL` sends one chat and one Responses request forcing a tool call through
it to that OpenAI-compatible backend, prints the answers and exits 0 when both called the tool.
Other scripts use `running(cache, port=None)`, a context manager yielding the base URL, and
`route_headers(backend_url)` / `header_options(backend_url)`, the headers that send a request to
a backend.

The gateway has no configuration of its own here: which provider and which host a request goes to
is named by the request's `x-portkey-provider` and `x-portkey-custom-host` headers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _kit import ServerError, free_port, serving

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEFAULT_CACHE = ROOT / ".cache" / "live-portkey"
START_TIMEOUT = 60.0
SERVER = Path("node_modules") / "@portkey-ai" / "gateway" / "build" / "start-server.js"
# Preloaded into node: the gateway takes no host and would listen on every interface.
LOOPBACK = HERE / "loopback.cjs"


def route_headers(backend_url: str) -> dict[str, str]:
    """The headers that route a request through the gateway to an OpenAI-compatible backend."""
    return {"x-portkey-provider": "openai", "x-portkey-custom-host": backend_url.rstrip("/")}


def header_options(backend_url: str) -> list[str]:
    """The same headers as `agentfuzz fuzz` options: `-H 'NAME: VALUE'` each."""
    options: list[str] = []
    for name, value in route_headers(backend_url).items():
        options += ["-H", f"{name}: {value}"]
    return options


def gateway_command(cache: Path, port: int) -> list[str]:
    """The gateway's command line: node itself (not npx, whose child would be the server)."""
    server = str(cache / SERVER)
    return ["node", "--require", str(LOOPBACK), server, f"--port={port}", "--headless"]


def gateway_env() -> dict[str, str]:
    """The gateway's environment: no provider key of the machine's may reach a backend."""
    env = dict(os.environ)
    for name in ("OPENAI_API_KEY", "PORTKEY_API_KEY"):
        env.pop(name, None)
    # Production mode: no development extras, the same code path a deployment runs.
    env["NODE_ENV"] = "production"
    return env


def check_built(cache: Path) -> None:
    for name in ("gateway.done", str(SERVER)):
        if not (cache / name).exists():
            raise ServerError(f"{cache} is not built (no {name}): run live/portkey/build.py first")


@contextlib.contextmanager
def running(cache: Path, port: int | None = None, timeout: float = START_TIMEOUT) -> Iterator[str]:
    """Start the gateway, wait until `GET /` answers 200, yield its base URL; stop its process
    group on exit. The log is `gateway-PORT.log` in the cache."""
    check_built(cache)
    port = port or free_port()
    root = f"http://127.0.0.1:{port}"
    log = cache / f"gateway-{port}.log"
    with serving("portkey", gateway_command(cache, port), log=log, cwd=cache, ready=f"{root}/",
                 timeout=timeout, env=gateway_env(), grace=10.0):  # fmt: skip
        yield f"{root}/v1"


PARAMETERS = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


def _post(url: str, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **headers},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        answer: dict[str, Any] = json.load(response)
        return answer


def check(base_url: str, backend_url: str, model: str) -> bool:
    """Force `get_weather` through chat and through Responses; print both; True if both call it."""
    ask = "Call get_weather for Paris."
    headers = route_headers(backend_url)
    chat = _post(
        f"{base_url}/chat/completions",
        {
            "model": model,
            "messages": [{"role": "user", "content": ask}],
            "tools": [
                {"type": "function", "function": {"name": "get_weather", "parameters": PARAMETERS}}
            ],
            "tool_choice": "required",
        },
        headers,
    )
    print(json.dumps(chat, indent=2))
    responses = _post(
        f"{base_url}/responses",
        {
            "model": model,
            "input": ask,
            "tools": [{"type": "function", "name": "get_weather", "parameters": PARAMETERS}],
            "tool_choice": "required",
        },
        headers,
    )
    print(json.dumps(responses, indent=2))
    chat_calls = chat["choices"][0]["message"].get("tool_calls") or []
    items = [item for item in responses.get("output", []) if item.get("type") == "function_call"]
    names = [call["function"]["name"] for call in chat_calls] + [item["name"] for item in items]
    return bool(chat_calls) and bool(items) and set(names) == {"get_weather"}


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="the cache folder")
    parser.add_argument("--port", type=int, default=None, help="default: a free port")
    parser.add_argument("--check", action="store_true", help="one forced call per api, then stop")
    parser.add_argument("--backend-url", help="for --check: e.g. http://127.0.0.1:8000/v1")
    parser.add_argument("--backend-model", default="kimi-k2-reference", help="for --check")
    args = parser.parse_args(argv)
    if args.check and not args.backend_url:
        parser.error("--check needs --backend-url")
    # SIGTERM unwinds like SIGINT, so the context manager always stops the process group.
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    started = time.monotonic()
    try:
        with running(args.cache.resolve(), args.port) as base_url:
            print(f"ready in {time.monotonic() - started:.1f} s", file=sys.stderr)
            print(base_url, flush=True)
            if args.check:
                ok = check(base_url, args.backend_url, args.backend_model)
                print("check: ok" if ok else "check: FAILED, get_weather was not called")
                return 0 if ok else 1
            while True:
                signal.pause()
    except ServerError as exc:
        print(f"serve.py: {exc}", file=sys.stderr)
        return 1
    except (OSError, KeyError, IndexError, ValueError) as exc:
        print(f"serve.py: check request failed: {exc!r}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
