"""A puppet campaign against real vLLM (CPU): per tool-call parser, vLLM started with the puppet
processor and that parser, and ``agentfuzz fuzz --puppet PARSER`` against it for a while.

    python live/vllm/puppet_campaign.py [--parsers hermes,pythonic] [--max-time 240] [--out DIR]
        [--fuzz-args '--api chat --no-stream --seed 1']

Runs with the project's venv (it starts the agentfuzz CLI beside it); the server runs with
build.py's cache (its venv, model and templates), as puppet_check.py starts it. Each parser
needs a chat template in templates/ (the SmolLM2 model has none of its own for tools). Every
finding is a bundle under OUT/PARSER with the command that found it (``found_by``). Prints one
line per parser: examples, requests, findings. Exit 0 when every campaign ran (findings or
not), 2 when agentfuzz itself failed, 3 when a server could not be started; with
``--skip-unbuilt``, one line and 0 on a machine whose build.py could not run (``.ci/run``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _kit import ServerError
from puppet_check import MODEL, puppet_server, server_options

# The parsers templates/ holds a chat template for, plainest first.
PARSERS = ("hermes", "pythonic", "qwen3_xml", "olmo3", "glm45", "phi4_mini_json", "kimi_k2")


def campaign(args: argparse.Namespace, parser: str) -> str:
    """Start vLLM with ``parser`` and the processor; fuzz it with ``--puppet parser``."""
    out = args.out / parser
    log = args.logs / f"puppet-campaign-{parser}.log"
    with puppet_server(args, parser, log) as base:
        fuzz = [str(Path(sys.executable).with_name("agentfuzz")), "fuzz", "--base-url", base]
        fuzz += ["--model", MODEL, "--puppet", parser, "--max-time", str(args.max_time)]
        fuzz += ["--max-examples", str(args.max_examples), "--timeout", "120", "--quiet"]
        fuzz += ["--out", str(out), *args.fuzz_args.split()]
        done = subprocess.run(fuzz, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{parser}: agentfuzz exit {done.returncode}\n{done.stdout}{done.stderr}")
    summary = json.loads((out / "summary.json").read_text())
    found = [f["signature"] for f in summary["findings"]]
    examples = sum(summary["examples"].values())
    return f"{parser}: {examples} examples, {summary['requests']} requests, findings: {found}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    server_options(parser)
    parser.add_argument("--parsers", default=",".join(PARSERS), help="comma-separated")
    parser.add_argument("--max-time", type=float, default=240.0, help="seconds per parser")
    parser.add_argument("--max-examples", type=int, default=100, help="per mode, per parser")
    parser.add_argument("--out", type=Path, default=Path(".cache/live-vllm-puppet-out"))
    parser.add_argument("--fuzz-args", default="", help="more for agentfuzz fuzz: '--api chat'")
    parser.add_argument(
        "--skip-unbuilt",
        action="store_true",
        help="one line and exit 0 when build.py's cache is not there (no package index)",
    )
    args = parser.parse_args(argv)
    if args.skip_unbuilt and not (args.cache / "venv.done").exists():
        print(f"live-vllm-puppet: skipped: {args.cache} holds no built server (build.py)")
        return 0
    args.logs = args.logs or args.cache
    args.logs.mkdir(parents=True, exist_ok=True)
    lines = []
    try:
        for name in args.parsers.split(","):
            lines.append(campaign(args, name))
            print(lines[-1], flush=True)
    except ServerError as exc:
        print(f"puppet_campaign.py: {exc}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
