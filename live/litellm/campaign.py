"""Fuzz the LiteLLM proxy in one of its modes in front of two backends; stop everything.

`python live/litellm/campaign.py [--proxy-mode bridge|passthrough] [--alias NAME] [--out DIR]
[--max-time S] ...` runs the proxy in that mode (`bridge`, the default: Responses translated to
chat; `passthrough`: Responses forwarded as they are), its model named `--alias` for clients
(default: the backend's own name), and, one after the other:

- each `--backends` profile (default `fixed`): the proxy in front of agentfuzz's own reference
  server in middleman mode, so `proxy_fidelity` sees what reached the backend, fuzzed with the
  profile of LiteLLM's proxy mode (`strategies/litellm-bridge.toml`, `strategies/litellm.toml`:
  what LiteLLM claims to carry in that mode; `--profile` overrides it). `fixed` is believed
  free of the seed bugs, so every finding there is the proxy's; a planted-fault profile answers
  with an odd shape the proxy must carry (or refuse) without breaking. Each writes to
  `--out/<profile>`;
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
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LIVE = HERE.parent
REFERENCE_MODEL = "kimi-k2-reference"  # what the reference server lists at /v1/models
# The fuzz profile behind the reference server, per LiteLLM proxy mode (`--profile` overrides
# it): what LiteLLM claims to carry in that mode, so `knob` and `relation` judge only that. The
# bridge drops the Responses fields it does not translate (strategies/litellm-bridge.toml says
# which).
PROFILES = {"bridge": "litellm-bridge", "passthrough": "litellm"}  # strategies/<name>.toml


sys.path.insert(0, str(LIVE))

from _kit import EXIT_OFFLINE, build, fuzz, load_script, report  # noqa: E402

proxy = load_script("litellm_serve", HERE / "serve.py")
vllm = load_script("vllm_serve", LIVE / "vllm" / "serve.py")


def _options(args: argparse.Namespace) -> list[str]:
    mode = ["--mode", args.mode, "--max-examples", str(args.max_examples)]
    mode += ["--api", args.api] if args.api else []
    return [*mode, "--max-time", str(args.max_time), "--seed", str(args.seed), "--timeout", "300"]


# The oracles that judge a planted odd shape by itself: the backend's fault, carried faithfully,
# is not the proxy's (a call named "" is no declared tool, nor the one tool_choice named). What
# is left judges how the proxy carried it (a 500, a broken stream, a schema it broke itself).
PLANTED = {"call-unnamed": ("unknown_tool", "tool_choice")}


def _oracles(profile: str) -> list[str]:
    if profile not in PLANTED:
        return []
    from agentfuzz.oracles import names  # the interpreter agentfuzz runs on

    return ["--oracles", ",".join(n for n in names() if n not in PLANTED[profile])]


def profile_for(args: argparse.Namespace) -> str:
    """`--profile` when given, else the profile of the LiteLLM proxy mode (PROFILES)."""
    return args.profile or PROFILES[args.proxy_mode]


def _running(args: argparse.Namespace, backend: str, model: str) -> Any:
    return proxy.running(args.cache, backend, model, mode=args.proxy_mode, alias=args.alias)


def _behind_reference(args: argparse.Namespace, profile: str) -> int:
    port = proxy.free_port()
    backend = f"http://127.0.0.1:{port}/v1"
    out = args.out / profile
    # The proxy only reaches its backend per request, so it can start before agentfuzz starts
    # the reference server on the port it was given.
    with _running(args, backend, REFERENCE_MODEL) as base_url:
        print(f"live-litellm: proxy ({args.proxy_mode}) {base_url} -> reference server "
              f"{profile} at {backend}, fuzz profile {profile_for(args)}", flush=True)  # fmt: skip
        backend_options = ["--backend", profile, "--backend-port", str(port), *_oracles(profile)]
        code = fuzz("live-litellm", base_url, args.alias or REFERENCE_MODEL, out,
                    *_options(args), "--profile", profile_for(args), *backend_options)  # fmt: skip
    report(f"live-litellm: {profile}", out)
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
        base_url = stack.enter_context(_running(args, backend, vllm.MODEL_NAME))
        print(
            f"live-litellm: proxy ({args.proxy_mode}) {base_url} -> vLLM at {backend}", flush=True
        )
        code = fuzz("live-litellm", base_url, args.alias or vllm.MODEL_NAME, out, *_options(args),
                    "--profile", "vllm-cpu", "--workers", str(args.workers))  # fmt: skip
    report("live-litellm: vllm", out)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=proxy.DEFAULT_CACHE)
    parser.add_argument("--vllm-cache", type=Path, default=vllm.DEFAULT_CACHE)
    parser.add_argument("--out", type=Path, default=Path("agentfuzz-out/live-litellm"))
    parser.add_argument("--proxy-mode", choices=proxy.MODES, default="bridge")
    parser.add_argument("--alias", default=None, help="the model's name for clients")
    parser.add_argument("--backends", default="fixed", help="reference server profiles, a,b,...")
    parser.add_argument(
        "--profile", default=None, help="fuzz profile behind the reference (default: the mode's)"
    )
    parser.add_argument("--mode", default="both", choices=("synthetic", "session", "both"))
    parser.add_argument("--api", choices=("chat", "responses"), default=None, help="one api only")
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
        codes = [_behind_reference(args, name) for name in args.backends.split(",") if name]
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
