"""Fuzz the LiteLLM proxy, translating Responses to chat, in front of two backends; stop everything.

`python live/litellm/campaign.py [--out DIR] [--max-time S] ...` runs, one after the other:

- `fixed`: the proxy in front of agentfuzz's own reference server (`--backend fixed`, believed
  free of the seed bugs) in proxy mode, so `proxy_fidelity` sees what reached the backend and
  every finding is the proxy's;
- `vllm`: the proxy in front of the real vLLM target of live/vllm, when its cache is built
  (`--vllm` forces it and builds the cache; `--no-vllm` skips it). Findings there may be
  vLLM's or the proxy's: compare with FINDINGS.md's vLLM section.

Exit: 0 nothing found (or `--findings-ok`), 1 findings, anything else: agentfuzz, the proxy or a
backend broke. `--skip-offline` turns "cannot reach the package index" into a skip (exit 0).
Run it with the interpreter agentfuzz is installed in.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
LIVE = HERE.parent
REFERENCE_MODEL = "kimi-k2-reference"  # what the reference server lists at /v1/models


def _load(name: str, path: Path) -> ModuleType:
    # live/vllm and live/litellm both have a serve.py: load each under its own name.
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


proxy = _load("litellm_serve", HERE / "serve.py")
vllm = _load("vllm_serve", LIVE / "vllm" / "serve.py")
sys.path.insert(0, str(LIVE))

from _kit import EXIT_OFFLINE, build, fuzz, report  # noqa: E402


def _options(args: argparse.Namespace) -> list[str]:
    mode = ["--mode", args.mode, "--max-examples", str(args.max_examples)]
    return [*mode, "--max-time", str(args.max_time), "--seed", str(args.seed), "--timeout", "300"]


def _behind_fixed(args: argparse.Namespace) -> int:
    port = proxy.free_port()
    backend = f"http://127.0.0.1:{port}/v1"
    out = args.out / "fixed"
    # The proxy only reaches its backend per request, so it can start before agentfuzz starts
    # the reference server on the port it was given.
    with proxy.running(args.cache, backend, REFERENCE_MODEL) as base_url:
        print(f"live-litellm: proxy {base_url} -> reference server at {backend}", flush=True)
        backend_options = ["--backend", "fixed", "--backend-port", str(port)]
        code = fuzz("live-litellm", base_url, REFERENCE_MODEL, out, *_options(args),
                    "--profile", args.profile, *backend_options)  # fmt: skip
    report("live-litellm: fixed", out)
    return code


def _behind_vllm(args: argparse.Namespace) -> int:
    cache = args.vllm_cache.resolve()
    if args.vllm is None and not (cache / "venv.done").is_file():
        print("live-litellm: vllm: skipped (no live/vllm cache; --vllm builds it)", flush=True)
        return 0
    built = build(LIVE / "vllm" / "build.py", cache)
    if built != 0:
        return built
    out = args.out / "vllm"
    with contextlib.ExitStack() as stack:
        backend = stack.enter_context(vllm.running(cache))
        base_url = stack.enter_context(proxy.running(args.cache, backend, vllm.MODEL_NAME))
        print(f"live-litellm: proxy {base_url} -> vLLM at {backend}", flush=True)
        code = fuzz("live-litellm", base_url, vllm.MODEL_NAME, out, *_options(args),
                    "--profile", "vllm-cpu", "--workers", str(args.workers))  # fmt: skip
    report("live-litellm: vllm", out)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=proxy.DEFAULT_CACHE)
    parser.add_argument("--vllm-cache", type=Path, default=vllm.DEFAULT_CACHE)
    parser.add_argument("--out", type=Path, default=Path("agentfuzz-out/live-litellm"))
    parser.add_argument("--profile", default="default", help="fuzz profile behind `fixed`")
    parser.add_argument("--mode", default="both", choices=("synthetic", "session", "both"))
    parser.add_argument("--max-examples", type=int, default=60, help="per api/stream mode")
    parser.add_argument("--max-time", type=float, default=240.0, help="seconds per backend")
    parser.add_argument("--workers", type=int, default=4, help="behind vLLM only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--vllm", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--skip-offline", action="store_true")
    parser.add_argument("--findings-ok", action="store_true", help="exit 0 on findings too")
    args = parser.parse_args(argv)
    args.cache = args.cache.resolve()
    built = build(HERE / "build.py", args.cache)
    if built == EXIT_OFFLINE and args.skip_offline:
        print("live-litellm: skipped: cannot reach the package index to build the proxy")
        return 0
    if built != 0:
        return built
    try:
        codes = [_behind_fixed(args)]
        if args.vllm is not False:
            codes.append(_behind_vllm(args))
    except (proxy.ServerError, vllm.ServerError) as exc:
        print(f"live-litellm: {exc}", file=sys.stderr)
        return 1
    broken = [c for c in codes if c not in (0, 1)]
    if broken:
        return broken[0]
    found = 1 in codes
    return 0 if not found or args.findings_ok else 1


if __name__ == "__main__":
    sys.exit(main())
