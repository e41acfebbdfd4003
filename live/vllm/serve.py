"""Run the live vLLM (CPU) target built by build.py on 127.0.0.1, and stop everything it started.

`python live/vllm/serve.py [--parser NAME]` prints the base URL and serves until SIGINT/SIGTERM;
`--check` sends one forced tool call, prints the answer and exits 0 when the server called the tool.
Other scripts use `running(cache, parser=...)`, a context manager yielding the base URL.

The tool parsers (PARSERS, the first the default) are vLLM's `--tool-call-parser` names that work
with SmolLM2 from text: each is served with its own chat template, `templates/<parser>.jinja`,
which lists the tools, writes past calls and renders tool results in that parser's format. MARKUP
says, per parser, what its format can leak into a turn: SmolLM2's ChatML tokens and the parser's
own markers.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _kit import Mode, ServerError, free_port, serve_main, serving

ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_CACHE = ROOT / ".cache" / "live-vllm"
MODEL_NAME = "smollm2"
HEALTH_TIMEOUT = 180.0
PARSERS = ("hermes", "phi4_mini_json", "pythonic", "olmo3", "qwen3_xml", "glm45", "kimi_k2")
PARSER = Mode("--parser", "parser", PARSERS)
# vLLM's stored Responses path (VLLM_ENABLE_RESPONSES_API_STORE=1): answers kept in memory,
# `previous_response_id` goes on from one. Off, vLLM ignores `store` and refuses any
# `previous_response_id` as not found.
STORE = Mode("--responses-store", "store", ("off", "on"))

CHATML = ("<|im_start|>", "<|im_end|>", "<|endoftext|>")
# What each parser's format can leak, as agentfuzz's leaked_markup signs it (a parameterised tag
# as `<function=…>`). Markers it has no family for (`functools[`, `<function_calls>`) are listed
# all the same: they are this format's, and the profile says what the target can leak.
MARKUP: dict[str, tuple[str, ...]] = {
    "hermes": (*CHATML, "<tool_call>", "</tool_call>"),
    "phi4_mini_json": (*CHATML, "functools["),
    "pythonic": CHATML,
    "olmo3": (*CHATML, "<function_calls>", "</function_calls>"),
    "qwen3_xml": (
        *CHATML,
        "<tool_call>",
        "</tool_call>",
        "<function=…>",
        "</function>",
        "<parameter=…>",
        "</parameter>",
    ),
    "glm45": (
        *CHATML,
        "<tool_call>",
        "</tool_call>",
        "<arg_key>",
        "</arg_key>",
        "<arg_value>",
        "</arg_value>",
    ),
    "kimi_k2": (
        *CHATML,
        "<|tool_calls_section_begin|>",
        "<|tool_call_begin|>",
        "<|tool_call_argument_begin|>",
        "<|tool_call_end|>",
        "<|tool_calls_section_end|>",
    ),
}


def template(cache: Path, parser: str) -> Path:
    """The chat template `parser` is served with, as build.py installs it."""
    return cache / "templates" / f"{parser}.jinja"


def server_command(cache: Path, port: int, parser: str = PARSERS[0]) -> list[str]:
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
        str(template(cache, parser)),
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        parser,
        # torch.compile would add about a minute to the start for no speed gain on this CPU.
        "--enforce-eager",
    ]


def check_built(cache: Path, parser: str = PARSERS[0]) -> None:
    for name in ("venv.done", "model.done", "launch.py", f"templates/{parser}.jinja"):
        if not (cache / name).exists():
            raise ServerError(f"{cache} is not built (no {name}): run live/vllm/build.py first")


@contextlib.contextmanager
def running(
    cache: Path,
    port: int | None = None,
    timeout: float = HEALTH_TIMEOUT,
    parser: str = PARSERS[0],
    store: str = "off",
) -> Iterator[str]:
    """Start the server from `cache` with the tool parser `parser` and its chat template, and
    its Responses store on or off (`store`), wait for /health, yield the base URL; stop it on
    exit."""
    if parser not in PARSERS:
        raise ServerError(f"unknown tool parser {parser!r} (known: {', '.join(PARSERS)})")
    check_built(cache, parser)
    port = port or free_port()
    root = f"http://127.0.0.1:{port}"
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1"}
    env["VLLM_ENABLE_RESPONSES_API_STORE"] = "1" if store == "on" else "0"
    command = server_command(cache, port, parser)
    log = cache / f"server-{parser}{'-store' if store == 'on' else ''}.log"
    with serving("vLLM", command, log=log, cwd=cache, ready=f"{root}/health", timeout=timeout,
                 env=env, poll=1.0):  # fmt: skip
        yield f"{root}/v1"


def main(argv: list[str] | None = None) -> int:
    return serve_main(
        __doc__.splitlines()[0], DEFAULT_CACHE, running, MODEL_NAME, argv, (PARSER, STORE)
    )


if __name__ == "__main__":
    sys.exit(main())
