"""Run the live llama.cpp (CPU) target built by build.py on 127.0.0.1; stop everything it started.

`python live/llamacpp/serve.py [--chat-format NAME]` prints the base URL and serves until
SIGINT/SIGTERM; `--check` sends one forced tool call, prints the answer and exits 0 when the server
called the tool. Other scripts use `running(cache, chat_format=...)`, a context manager yielding the
base URL. The chat formats (FORMATS) are the two of the server's function-calling formats that
work offline with the packaged GGUF: `chatml-function-calling` (tools in a ChatML system prompt,
calls constrained by a grammar) and `functionary` (the v0 format); `functionary-v1`/`-v2` need a
Hugging Face tokenizer folder, and the others parse calls only when `tool_choice` names one.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _kit import Mode, ServerError, free_port, serve_main, serving

ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_CACHE = ROOT / ".cache" / "live-llamacpp"
MODEL_NAME = "smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
READY_TIMEOUT = 120.0
FORMATS = ("chatml-function-calling", "functionary")
CHAT_FORMAT = Mode("--chat-format", "chat_format", FORMATS)


def server_command(cache: Path, port: int, chat_format: str = FORMATS[0]) -> list[str]:
    """The llama-cpp-python server command line, run with the cache venv's python."""
    return [
        str(cache / "venv" / "bin" / "python"),
        "-m",
        "llama_cpp.server",
        "--model",
        str(cache / "model" / MODEL_FILE),
        "--model_alias",
        MODEL_NAME,
        "--chat_format",
        chat_format,
        "--n_ctx",
        "2048",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]


def check_built(cache: Path) -> None:
    for name in ("venv.done", "model.done", f"model/{MODEL_FILE}"):
        if not (cache / name).exists():
            raise ServerError(f"{cache} is not built (no {name}): run live/llamacpp/build.py first")


@contextlib.contextmanager
def running(
    cache: Path,
    port: int | None = None,
    timeout: float = READY_TIMEOUT,
    chat_format: str = FORMATS[0],
) -> Iterator[str]:
    """Start the server from `cache` with `chat_format`, wait until it answers, yield the base
    URL; stop it on exit."""
    check_built(cache)
    if chat_format not in FORMATS:
        raise ServerError(f"unknown chat format {chat_format!r} (known: {', '.join(FORMATS)})")
    port = port or free_port()
    root = f"http://127.0.0.1:{port}"
    command = server_command(cache, port, chat_format)
    # It has no /health: its model list answering is the sign it is ready.
    with serving("llama.cpp", command, log=cache / "server.log", cwd=cache,
                 ready=f"{root}/v1/models", timeout=timeout):  # fmt: skip
        yield f"{root}/v1"


def main(argv: list[str] | None = None) -> int:
    return serve_main(__doc__.splitlines()[0], DEFAULT_CACHE, running, MODEL_NAME, argv,
                      CHAT_FORMAT)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
