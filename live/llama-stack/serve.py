"""Run the Llama Stack built by build.py on 127.0.0.1 in front of one OpenAI-compatible backend.

`python live/llama-stack/serve.py --backend-url URL --backend-model NAME` prints the stack's base
URL and serves until SIGINT/SIGTERM; `--check` sends one chat and one Responses request forcing a
tool call, prints the answers and exits 0 when both called the tool. Other scripts use
`running(cache, backend_url, backend_model)`, a context manager yielding the base URL.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _kit import ServerError, forced_calls, free_port, serve_or_check, serving

ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_CACHE = ROOT / ".cache" / "live-llama-stack"
START_TIMEOUT = 90.0
PROVIDER = "vllm"  # the provider id: the stack names the backend's model `vllm/<name>`


def stack_model(backend_model: str) -> str:
    """The name clients give the backend's model at the stack."""
    return f"{PROVIDER}/{backend_model}"


def stack_config(state: Path, backend_url: str, backend_model: str) -> dict[str, Any]:
    """The run config: Responses over one `remote::vllm` provider routed to `backend_url`.

    Everything it stores (responses, conversations, files, the registry) lands under `state`.
    The model is registered here rather than listed from the backend, so the stack starts before
    the backend does (agentfuzz's middleman mode starts the backend itself).
    """
    kv = {"type": "kv_sqlite", "db_path": str(state / "kvstore.db")}
    sql = {"type": "sql_sqlite", "db_path": str(state / "sql_store.db")}
    return {
        "version": 2,
        "distro_name": "agentfuzz-live",
        # The builtin Responses provider needs these; vector_io and tool_runtime run with no
        # provider at all (no file search, no web search, no MCP: hosted tools have nothing).
        "apis": ["inference", "responses", "files", "vector_io", "tool_runtime"],
        "providers": {
            "inference": [
                {
                    "provider_id": PROVIDER,
                    "provider_type": "remote::vllm",
                    "config": {
                        "base_url": backend_url.rstrip("/"),
                        # A token makes the stack skip its look-up of the model at the backend;
                        # the backend ignores it.
                        "api_token": "none",
                    },
                }
            ],
            "files": [
                {
                    "provider_id": "localfs",
                    "provider_type": "inline::localfs",
                    "config": {
                        "storage_dir": str(state / "files"),
                        "metadata_store": {"table_name": "files_metadata", "backend": "sql"},
                    },
                }
            ],
            "responses": [
                {
                    "provider_id": "builtin",
                    "provider_type": "inline::builtin",
                    "config": {
                        "persistence": {
                            "agent_state": {"namespace": "agents", "backend": "kv"},
                            "responses": {"table_name": "responses", "backend": "sql"},
                        }
                    },
                }
            ],
        },
        "storage": {
            "backends": {"kv": kv, "sql": sql},
            "stores": {
                "metadata": {"namespace": "registry", "backend": "kv"},
                "inference": {"table_name": "inference_store", "backend": "sql"},
                "conversations": {"table_name": "openai_conversations", "backend": "sql"},
                "prompts": {"namespace": "prompts", "backend": "kv"},
                "connectors": {"namespace": "connectors", "backend": "kv"},
            },
        },
        "registered_resources": {
            "models": [
                {
                    "model_id": backend_model,
                    "provider_id": PROVIDER,
                    "provider_model_id": backend_model,
                    "model_type": "llm",
                }
            ]
        },
        # Loopback only (the stack binds every interface otherwise), no auth: any client fuzzes it.
        "server": {"host": "127.0.0.1"},
    }


def write_config(path: Path, config: dict[str, Any]) -> None:
    # JSON is valid YAML: no PyYAML needed on this side.
    path.write_text(json.dumps(config, indent=2) + "\n")


def stack_command(cache: Path, config: Path, port: int) -> list[str]:
    """The server's command line, run from the cache venv."""
    return [str(cache / "venv" / "bin" / "llama"), "stack", "run", str(config), "--port", str(port)]


def stack_env(home: Path) -> dict[str, str]:
    """The environment for an offline stack: its own config dir, no real keys, no telemetry."""
    env = {**os.environ, "LLAMA_STACK_CONFIG_DIR": str(home), "SQLITE_STORE_DIR": str(home)}
    # Keys in the environment would switch on hosted providers' model listing; none has a use.
    for name in ("OPENAI_API_KEY", "VLLM_URL", "VLLM_API_TOKEN", "LLAMA_STACK_PORT"):
        env.pop(name, None)
    env["OTEL_SDK_DISABLED"] = "true"
    env["HF_HUB_OFFLINE"] = "1"
    return env


def check_built(cache: Path) -> None:
    for name in ("venv.done", "venv/bin/llama"):
        if not (cache / name).exists():
            raise ServerError(
                f"{cache} is not built (no {name}): run live/llama-stack/build.py first"
            )


@contextlib.contextmanager
def running(
    cache: Path,
    backend_url: str,
    backend_model: str,
    port: int | None = None,
    timeout: float = START_TIMEOUT,
) -> Iterator[str]:
    """Start the stack in front of `backend_url`, wait until healthy, yield its base URL; stop it.

    Its state (stored responses, SQLite files) lives in `state-PORT/` and is removed on exit; the
    log `stack-PORT.log` stays.
    """
    check_built(cache)
    port = port or free_port()
    root = f"http://127.0.0.1:{port}"
    state, log = cache / f"state-{port}", cache / f"stack-{port}.log"
    shutil.rmtree(state, ignore_errors=True)
    state.mkdir(parents=True)
    config = state / "config.yaml"
    write_config(config, stack_config(state, backend_url, backend_model))
    command, ready = stack_command(cache, config, port), f"{root}/v1/health"
    try:
        with serving("llama-stack", command, log=log, cwd=cache, ready=ready, timeout=timeout,
                     env=stack_env(state), grace=15.0):  # fmt: skip
            yield f"{root}/v1"
    finally:
        shutil.rmtree(state, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="the cache folder")
    parser.add_argument("--backend-url", required=True, help="e.g. http://127.0.0.1:8000/v1")
    parser.add_argument("--backend-model", required=True, help="the backend's model name")
    parser.add_argument("--port", type=int, default=None, help="default: a free port")
    parser.add_argument("--check", action="store_true", help="one forced call per api, then stop")
    args = parser.parse_args(argv)
    model = stack_model(args.backend_model)
    started = running(args.cache.resolve(), args.backend_url, args.backend_model, args.port)
    check = (lambda url: forced_calls(url, model)) if args.check else None
    return serve_or_check(started, check, note=f"model: {model}")


if __name__ == "__main__":
    sys.exit(main())
