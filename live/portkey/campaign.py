"""Fuzz the Portkey AI gateway in middleman mode in front of agentfuzz's reference server; stop all.

`python live/portkey/campaign.py [--out DIR] [--max-time S] ...` builds the gateway if needed, then
runs, one after the other, each with a fresh gateway routed by the `x-portkey-provider: openai`
and `x-portkey-custom-host` headers:

- `fixed`: the gateway in front of the reference server (`--backend fixed`, believed free of the
  seed bugs) in middleman mode, so `proxy_fidelity` sees what reached the backend and every finding
  is the gateway's;
- odd-shape backends (`--odd`, default `calls-say-stop,item-ids-shared`): reference profiles that
  each plant one fault in their answers, on the api it lives on. A gateway that passes answers
  through must hand the planted fault to the client unchanged: its signature is expected and
  reported as passed through (or as masked when missing); any other finding is the gateway's;
- `vllm`: the gateway in front of the real vLLM target of live/vllm, only when that cache is built
  (`--vllm` forces it and builds the cache; `--no-vllm` skips it). Findings there may be vLLM's
  or the gateway's: compare with FINDINGS.md's vLLM section.

Exit: 0 nothing found (or `--findings-ok`), 1 findings, anything else: agentfuzz, the gateway or a
backend broke. `--skip-offline` turns "cannot reach the npm registry" into a skip (exit 0). Run it
with the interpreter agentfuzz is installed in.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIVE = HERE.parent
ROOT = LIVE.parent
REFERENCE_MODEL = "kimi-k2-reference"  # what the reference server lists at /v1/models
HARMONY_MODEL = "gpt-oss-reference"  # the same, for the profiles on the harmony template
PROFILE = "portkey"  # strategies/portkey.toml

# Odd-shape backend -> (the api its planted fault lives on, the model it serves, the signatures
# the fault is found under: README's table of reference profiles). item-ids-shared's fault is in
# the final response: streamed, each later item's id then differs from its output_item events.
ODD: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "calls-say-stop": ("chat", REFERENCE_MODEL, ("consistency:calls_with_stop",)),
    "item-ids-shared": (
        "responses",
        HARMONY_MODEL,
        (
            "consistency:shared_item_id",
            "identity:message:id",
            "identity:function_call:id",
            "identity:reasoning:id",
        ),
    ),
    "model-renamed": ("chat", REFERENCE_MODEL, ("consistency:model_echo",)),
    "parts-as-json": ("chat", REFERENCE_MODEL, ("relation:text_part",)),
    "created-disagrees": (
        "responses",
        REFERENCE_MODEL,
        ("consistency:envelope:parallel_tool_calls",),
    ),
}
DEFAULT_ODD = "calls-say-stop,item-ids-shared"


sys.path.insert(0, str(LIVE))

from _kit import EXIT_OFFLINE, build, free_port, fuzz, load_script, report  # noqa: E402

gateway = load_script("portkey_serve", HERE / "serve.py")
vllm = load_script("vllm_serve", LIVE / "vllm" / "serve.py")


def odd_backends(text: str) -> list[str]:
    """`--odd`'s comma-separated profiles, checked against ODD; "" means none."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in ODD]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown odd-shape backend(s): {', '.join(unknown)}")
    return names


def _options(args: argparse.Namespace, max_time: float) -> list[str]:
    mode = ["--mode", args.mode, "--max-examples", str(args.max_examples)]
    return [*mode, "--max-time", str(max_time), "--seed", str(args.seed), "--timeout", "300"]


def signatures(out: Path) -> list[str]:
    """The signatures of the findings in `out/summary.json` (none when it is missing)."""
    summary = out / "summary.json"
    if not summary.is_file():
        return []
    return [row["signature"] for row in json.loads(summary.read_text()).get("findings", [])]


def split_planted(found: list[str], planted: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """`found` split into the planted fault's signatures (each of `planted`, or one of them
    followed by `:` and a detail) and everything else."""
    passed = [s for s in found if any(s == p or s.startswith(f"{p}:") for p in planted)]
    return passed, [s for s in found if s not in passed]


def _behind_reference(args: argparse.Namespace, backend: str, max_time: float) -> int:
    """One proxy-mode campaign with the reference server profile `backend` behind the gateway.
    Returns agentfuzz's code; for an odd-shape backend, 1 only for a finding not planted."""
    port = free_port()
    backend_url = f"http://127.0.0.1:{port}/v1"
    out = args.out / backend
    api, model, planted = ODD.get(backend, ("", REFERENCE_MODEL, ()))
    only = ["--api", api] if api else []
    # The gateway only reaches its backend per request (named by the headers), so it can start
    # before agentfuzz starts the reference server on the port it was given.
    with gateway.running(args.cache) as base_url:
        print(f"live-portkey: gateway {base_url} -> reference server {backend} at {backend_url}",
              flush=True)  # fmt: skip
        code = fuzz("live-portkey", base_url, model, out, *_options(args, max_time), *only,
                    "--profile", args.profile, "--backend", backend, "--backend-port", str(port),
                    *gateway.header_options(backend_url))  # fmt: skip
    report(f"live-portkey: {backend}", out)
    if not planted or code not in (0, 1):
        return code
    passed, other = split_planted(signatures(out), planted)
    seen = f"passed through ({' '.join(passed)})" if passed else "NOT seen (masked, or not reached)"
    print(f"live-portkey: {backend}: planted fault {seen}; "
          f"{len(other)} other finding(s) {' '.join(other)}".rstrip(), flush=True)  # fmt: skip
    return 1 if other else 0


def _behind_vllm(args: argparse.Namespace) -> int:
    cache = args.vllm_cache.resolve()
    if args.vllm is None and not (cache / "venv.done").is_file():
        print("live-portkey: vllm: skipped (no live/vllm cache; --vllm builds it)", flush=True)
        return 0
    built = build(LIVE / "vllm" / "build.py", cache)
    if built != 0:
        return built
    out = args.out / "vllm"
    with contextlib.ExitStack() as stack:
        backend = stack.enter_context(vllm.running(cache))
        base_url = stack.enter_context(gateway.running(args.cache))
        print(f"live-portkey: gateway {base_url} -> vLLM at {backend}", flush=True)
        code = fuzz("live-portkey", base_url, vllm.MODEL_NAME, out,
                    *_options(args, args.max_time), "--profile", "vllm-cpu",
                    "--workers", str(args.workers), *gateway.header_options(backend))  # fmt: skip
    report("live-portkey: vllm", out)
    return code


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=gateway.DEFAULT_CACHE)
    parser.add_argument("--vllm-cache", type=Path, default=vllm.DEFAULT_CACHE)
    parser.add_argument("--out", type=Path, default=Path("agentfuzz-out/live-portkey"))
    parser.add_argument("--profile", default=PROFILE, help="fuzz profile behind the reference")
    parser.add_argument("--mode", default="both", choices=("synthetic", "session", "both"))
    parser.add_argument("--max-examples", type=int, default=100000, help="per api/stream mode")
    parser.add_argument("--max-time", type=float, default=240.0, help="seconds behind `fixed`")
    parser.add_argument("--odd", type=odd_backends, default=odd_backends(DEFAULT_ODD),
                        help=f"odd-shape backends after `fixed`, comma-separated, '' for none "
                             f"(of {', '.join(ODD)}; default {DEFAULT_ODD})")  # fmt: skip
    parser.add_argument("--odd-max-time", type=float, default=None,
                        help="seconds behind each odd-shape backend (default: a quarter of "
                             "--max-time)")  # fmt: skip
    parser.add_argument("--workers", type=int, default=1, help="behind vLLM only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--vllm", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--skip-offline", action="store_true")
    parser.add_argument("--findings-ok", action="store_true", help="exit 0 on findings too")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    args.cache = args.cache.resolve()
    built = build(HERE / "build.py", args.cache)
    if built == EXIT_OFFLINE and args.skip_offline:
        print("live-portkey: skipped: cannot reach the npm registry to build the gateway")
        return 0
    if built != 0:
        return built
    odd_time = args.odd_max_time or max(30.0, args.max_time / 4)
    try:
        codes = [_behind_reference(args, "fixed", args.max_time)]
        codes += [_behind_reference(args, name, odd_time) for name in args.odd]
        if args.vllm is not False:
            codes.append(_behind_vllm(args))
    except (gateway.ServerError, vllm.ServerError) as exc:
        print(f"live-portkey: {exc}", file=sys.stderr)
        return 1
    broken = [c for c in codes if c not in (0, 1)]
    if broken:
        return broken[0]
    found = 1 in codes
    return 0 if not found or args.findings_ok else 1


if __name__ == "__main__":
    sys.exit(main())
