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
import os
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _kit import ServerError, forced_calls, free_port, serve_or_check, serving

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
    headers = route_headers(args.backend_url) if args.check else {}
    check = (lambda url: forced_calls(url, args.backend_model, headers)) if args.check else None
    return serve_or_check(running(args.cache.resolve(), args.port), check)


if __name__ == "__main__":
    sys.exit(main())
