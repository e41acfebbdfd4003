"""Run the live vLLM (CPU) target built by build.py on 127.0.0.1, and stop everything it started.

`python live/vllm/serve.py` prints the base URL and serves until SIGINT/SIGTERM; `--check` sends one
forced tool call, prints the answer and exits 0 when the server called the tool. Other scripts use
`running(cache)`, a context manager yielding the base URL.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _kit import ServerError, free_port, serve_main, serving

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


def main(argv: list[str] | None = None) -> int:
    return serve_main(__doc__.splitlines()[0], DEFAULT_CACHE, running, MODEL_NAME, argv)


if __name__ == "__main__":
    sys.exit(main())
