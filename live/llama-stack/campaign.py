"""Fuzz Llama Stack's Responses server before the reference server in middleman mode; stop all.

`python live/llama-stack/campaign.py [--out DIR] [--max-time S] ...` builds the stack if needed,
then runs, one after the other, each against a fresh stack:

- `fixed`: the stack in front of agentfuzz's reference server (`--backend fixed`, believed free
  of the seed bugs) in middleman mode, so `proxy_fidelity` sees what reached the backend and every
  finding is the stack's. Both apis: `/v1/responses` is Llama Stack's own implementation over
  the backend's streamed chat completions; `/v1/chat/completions` is routed to the backend;
- the odd-shape backends (`--odd`, default `calls-say-stop,chat-no-done`): reference servers
  whose chat answers are legal but unusual (calls that end with `finish_reason: "stop"`, a
  stream without `data: [DONE]`), on `/v1/responses` only: the chat route would hand the
  planted shape to the client as it is, which says nothing about the stack;
- `vllm`: the stack in front of the real vLLM target of live/vllm, when its cache is built
  (`.cache/live-vllm/venv.done`; otherwise one skip line). `--vllm` builds it and runs it,
  `--no-vllm` skips it.

Exit: 0 nothing found (or `--findings-ok`), 1 findings, anything else: agentfuzz, the stack or a
backend broke. `--skip-offline` turns "cannot reach the package index" into a skip (exit 0).
Run it with the interpreter agentfuzz is installed in.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIVE = HERE.parent
REFERENCE_MODEL = "kimi-k2-reference"  # what the reference server lists at /v1/models
# Reference-server profiles whose chat answers exercise a Responses server built over chat.
ODD_BACKENDS = ("calls-say-stop", "chat-no-done")
LABEL = "live-llama-stack"


sys.path.insert(0, str(LIVE))

from _kit import EXIT_OFFLINE, build, fuzz, load_script, report  # noqa: E402

stack = load_script("llama_stack_serve", HERE / "serve.py")
vllm = load_script("vllm_serve", LIVE / "vllm" / "serve.py")


def odd_backends(text: str) -> list[str]:
    """`--odd`'s comma-separated profile names, blanks dropped; [] for "" or "none"."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    return [] if names == ["none"] else names


def odd_time(max_time: float) -> float:
    """Seconds for each odd-shape backend: half of `--max-time`, one api instead of two."""
    return max(30.0, max_time / 2)


def fuzz_options(args: argparse.Namespace, max_time: float) -> list[str]:
    mode = ["--mode", args.mode, "--max-examples", str(args.max_examples)]
    mode += ["--api", args.api] if args.api else []
    # One worker: middleman mode matches each request to what reached the backend.
    return [*mode, "--max-time", str(max_time), "--seed", str(args.seed), "--timeout", "300",
            "--workers", "1", "--profile", args.profile]  # fmt: skip


def _behind_reference(args: argparse.Namespace, backend: str, *api: str) -> int:
    port = stack.free_port()
    backend_url = f"http://127.0.0.1:{port}/v1"
    out = args.out / backend
    max_time = args.max_time if backend == "fixed" else odd_time(args.max_time)
    # The model is registered in the run config, so the stack starts before agentfuzz starts the
    # reference server on the port it was given.
    with stack.running(args.cache, backend_url, REFERENCE_MODEL) as base_url:
        print(f"{LABEL}: stack {base_url} -> reference server `{backend}` at {backend_url}",
              flush=True)  # fmt: skip
        backend_options = ["--backend", backend, "--backend-port", str(port)]
        code = fuzz(LABEL, base_url, stack.stack_model(REFERENCE_MODEL), out,
                    *fuzz_options(args, max_time), *backend_options, *api)  # fmt: skip
    report(f"{LABEL}: {backend}", out)
    return code


def _behind_vllm(args: argparse.Namespace) -> int:
    cache = args.vllm_cache.resolve()
    if args.vllm is None and not (cache / "venv.done").is_file():
        print(f"{LABEL}: vllm: skipped (no live/vllm cache; --vllm builds it)",
              flush=True)  # fmt: skip
        return 0
    built = build(LIVE / "vllm" / "build.py", cache)
    if built != 0:
        return built
    out = args.out / "vllm"
    with contextlib.ExitStack() as stack_of:
        backend = stack_of.enter_context(vllm.running(cache))
        base_url = stack_of.enter_context(stack.running(args.cache, backend, vllm.MODEL_NAME))
        print(f"{LABEL}: stack {base_url} -> vLLM at {backend}", flush=True)
        options = fuzz_options(args, args.max_time)
        options[options.index("--profile") + 1] = "vllm-cpu"
        code = fuzz(LABEL, base_url, stack.stack_model(vllm.MODEL_NAME), out, *options)
    report(f"{LABEL}: vllm", out)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=stack.DEFAULT_CACHE)
    parser.add_argument("--vllm-cache", type=Path, default=vllm.DEFAULT_CACHE)
    parser.add_argument("--out", type=Path, default=Path(f"agentfuzz-out/{LABEL}"))
    parser.add_argument(
        "--profile", default="llama-stack", help="fuzz profile (reference backends)"
    )
    parser.add_argument("--mode", default="both", choices=("synthetic", "session", "both"))
    parser.add_argument("--api", choices=("chat", "responses"), default=None, help="one api only")
    parser.add_argument("--max-examples", type=int, default=60, help="per api/stream mode")
    parser.add_argument(
        "--max-time", type=float, default=240.0, help="seconds behind `fixed`; half per odd one"
    )
    parser.add_argument(
        "--odd",
        default=",".join(ODD_BACKENDS),
        help="odd-shape reference profiles to fuzz /v1/responses behind (comma-separated; none)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--vllm", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--skip-offline", action="store_true")
    parser.add_argument("--findings-ok", action="store_true", help="exit 0 on findings too")
    args = parser.parse_args(argv)
    args.cache = args.cache.resolve()
    built = build(HERE / "build.py", args.cache)
    if built == EXIT_OFFLINE and args.skip_offline:
        print(f"{LABEL}: skipped: cannot reach the package index to build Llama Stack")
        return 0
    if built != 0:
        return built
    try:
        codes = [_behind_reference(args, "fixed")]
        for backend in odd_backends(args.odd):
            codes.append(_behind_reference(args, backend, "--api", "responses"))
        if args.vllm is not False:
            codes.append(_behind_vllm(args))
    except (stack.ServerError, vllm.ServerError) as exc:
        print(f"{LABEL}: {exc}", file=sys.stderr)
        return 1
    broken = [c for c in codes if c not in (0, 1)]
    if broken:
        return broken[0]
    found = 1 in codes
    return 0 if not found or args.findings_ok else 1


if __name__ == "__main__":
    sys.exit(main())
