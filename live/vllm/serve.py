"""Run the live vLLM (CPU) target built by build.py on 127.0.0.1, and stop everything it started.

`python live/vllm/serve.py` prints the base URL and serves until SIGINT/SIGTERM; `--check` sends one
forced tool call, prints the answer and exits 0 when the server called the tool. Other scripts use
`running(cache)`, a context manager yielding the base URL.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _kit import ServerError, free_port, post, serving

ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_CACHE = ROOT / ".cache" / "live-vllm"
MODEL_NAME = "smollm2"
HEALTH_TIMEOUT = 180.0


def server_command(cache: Path, port: int) -> list[str]:
    """The vLLM command line, run through the launcher with the cache venv's python."""
    return [
        str(cache / "venv" / "bin" / "python"),
        str(cache / "launch.py"),
        "serve",
        str(cache / "model"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--served-model-name",
        MODEL_NAME,
        "--max-model-len",
        "2048",
        "--chat-template",
        str(cache / "hermes.jinja"),
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "hermes",
        # torch.compile would add about a minute to the start for no speed gain on this CPU.
        "--enforce-eager",
    ]


def check_built(cache: Path) -> None:
    for name in ("venv.done", "model.done", "launch.py", "hermes.jinja"):
        if not (cache / name).exists():
            raise ServerError(f"{cache} is not built (no {name}): run live/vllm/build.py first")


@contextlib.contextmanager
def running(cache: Path, port: int | None = None, timeout: float = HEALTH_TIMEOUT) -> Iterator[str]:
    """Start the server from `cache`, wait for /health, yield the base URL; stop it on exit."""
    check_built(cache)
    port = port or free_port()
    root = f"http://127.0.0.1:{port}"
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1"}
    command = server_command(cache, port)
    log = cache / "server.log"
    with serving("vLLM", command, log=log, cwd=cache, ready=f"{root}/health", timeout=timeout,
                 env=env, poll=1.0):  # fmt: skip
        yield f"{root}/v1"


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def check(base_url: str) -> bool:
    """Send one chat request forcing `get_weather`; print the answer; say whether it was called."""
    body = {
        "model": MODEL_NAME,
        "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
        "tools": [WEATHER_TOOL],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "temperature": 0,
        "max_tokens": 200,
    }
    started = time.monotonic()
    answer = post(f"{base_url}/chat/completions", body)
    print(json.dumps(answer, indent=2))
    print(f"answered in {time.monotonic() - started:.1f} s")
    calls = answer["choices"][0]["message"].get("tool_calls") or []
    if not calls or calls[0]["function"]["name"] != "get_weather":
        return False
    json.loads(calls[0]["function"]["arguments"])
    return True


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="the cache folder")
    parser.add_argument("--port", type=int, default=None, help="default: a free port")
    parser.add_argument("--check", action="store_true", help="one forced tool call, then stop")
    args = parser.parse_args(argv)
    # SIGTERM unwinds like SIGINT, so the context manager always stops the process group.
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    started = time.monotonic()
    try:
        with running(args.cache.resolve(), args.port) as base_url:
            print(f"healthy in {time.monotonic() - started:.0f} s", file=sys.stderr)
            print(base_url, flush=True)
            if args.check:
                ok = check(base_url)
                print("check: ok" if ok else "check: FAILED, no call to get_weather")
                return 0 if ok else 1
            while True:
                signal.pause()
    except ServerError as exc:
        print(f"serve.py: {exc}", file=sys.stderr)
        return 1
    except (OSError, KeyError, ValueError) as exc:
        print(f"serve.py: check request failed: {exc!r}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
