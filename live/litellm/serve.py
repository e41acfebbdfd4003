"""Run the LiteLLM proxy built by build.py on 127.0.0.1 in front of one OpenAI-compatible backend.

`python live/litellm/serve.py --backend-url URL --backend-model NAME [--mode bridge|passthrough]
[--alias NAME]` prints the proxy's base URL and serves until SIGINT/SIGTERM; `--check` sends one
chat and one Responses request forcing a tool call, prints the answers and exits 0 when both
called the tool. Other scripts use `running(cache, backend_url, backend_model, mode=...,
alias=...)`, a context manager yielding the base URL.

The two modes LiteLLM ships for a Responses request to an OpenAI-compatible backend: `bridge`
translates it into chat completions (`use_chat_completions_api`, where ids are rewritten);
`passthrough` forwards it to the backend's own `/v1/responses`. `--alias` names the model as
clients see it, routed to the backend's model under its own name (a deployment's usual setup, and
one more field the proxy must rewrite).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _kit import ServerError, forced_calls, free_port, serve_or_check, serving

ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_CACHE = ROOT / ".cache" / "live-litellm"
START_TIMEOUT = 60.0


MODES = ("bridge", "passthrough")


def proxy_config(
    backend_url: str, backend_model: str, mode: str = "bridge", alias: str | None = None
) -> dict[str, Any]:
    """The proxy's config: one model, named `alias` (default: as the backend's), routed to the
    backend as an OpenAI server; `mode` is how it serves `/v1/responses` (see MODES)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} (known: {', '.join(MODES)})")
    params: dict[str, Any] = {
        "model": f"openai/{backend_model}",
        "api_base": backend_url.rstrip("/"),
        # The openai client inside LiteLLM insists on a key; the backend ignores it.
        "api_key": "none",
    }
    if mode == "bridge":
        params["use_chat_completions_api"] = True
    return {
        "model_list": [{"model_name": alias or backend_model, "litellm_params": params}],
        # Loopback only and keyless on purpose: any client may fuzz it without knowing a key. The
        # proxy refuses to start without a master key unless told so.
        "general_settings": {"dangerously_permit_weak_or_unset_master_key": True},
    }


def write_config(path: Path, config: dict[str, Any]) -> None:
    # JSON is valid YAML: no PyYAML needed on this side.
    path.write_text(json.dumps(config, indent=2) + "\n")


def proxy_command(cache: Path, config: Path, port: int) -> list[str]:
    """The proxy's command line, run from the cache venv."""
    litellm = str(cache / "venv" / "bin" / "litellm")
    return [litellm, "--config", str(config), "--host", "127.0.0.1", "--port", str(port)]


def proxy_env() -> dict[str, str]:
    """The environment for an offline proxy: the packaged model cost map, no real key."""
    # Without it the proxy spends seconds retrying a download of the cost map before falling back.
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    # The proxy only talks to a loopback backend: a real key in the environment has no use there.
    env.pop("OPENAI_API_KEY", None)
    return env


def check_built(cache: Path) -> None:
    for name in ("venv.done", "venv/bin/litellm"):
        if not (cache / name).exists():
            raise ServerError(f"{cache} is not built (no {name}): run live/litellm/build.py first")


@contextlib.contextmanager
def running(
    cache: Path,
    backend_url: str,
    backend_model: str,
    port: int | None = None,
    timeout: float = START_TIMEOUT,
    mode: str = "bridge",
    alias: str | None = None,
) -> Iterator[str]:
    """Start the proxy in front of `backend_url`, wait until ready, yield its base URL; stop it."""
    check_built(cache)
    port = port or free_port()
    root = f"http://127.0.0.1:{port}"
    config, log = cache / f"proxy-{port}.yaml", cache / f"proxy-{port}.log"
    write_config(config, proxy_config(backend_url, backend_model, mode, alias))
    command, ready = proxy_command(cache, config, port), f"{root}/health/readiness"
    try:
        with serving("litellm", command, log=log, cwd=cache, ready=ready, timeout=timeout,
                     env=proxy_env(), grace=15.0):  # fmt: skip
            yield f"{root}/v1"
    finally:
        config.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="the cache folder")
    parser.add_argument("--backend-url", required=True, help="e.g. http://127.0.0.1:8000/v1")
    parser.add_argument("--backend-model", required=True, help="the backend's model name")
    parser.add_argument("--port", type=int, default=None, help="default: a free port")
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="bridge",
        help="bridge: /v1/responses translated to chat completions; passthrough: forwarded as is",
    )
    parser.add_argument(
        "--alias", default=None, help="the model's name for clients (default: the backend's)"
    )
    parser.add_argument("--check", action="store_true", help="one forced call per api, then stop")
    args = parser.parse_args(argv)
    model = args.alias or args.backend_model
    started = running(args.cache.resolve(), args.backend_url, args.backend_model, args.port,
                      mode=args.mode, alias=args.alias)  # fmt: skip
    return serve_or_check(started, (lambda url: forced_calls(url, model)) if args.check else None)


if __name__ == "__main__":
    sys.exit(main())
