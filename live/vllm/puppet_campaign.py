"""A puppet campaign against real vLLM (CPU): per tool-call parser, vLLM started with the puppet
processor and that parser, and ``agentfuzz fuzz --puppet PARSER`` against it for a while.

    python live/vllm/puppet_campaign.py [--parsers hermes,pythonic] [--max-time 240] [--out DIR]
        [--fuzz-args '--api chat --no-stream --seed 1']

Runs with the project's venv (it starts the agentfuzz CLI beside it); the server runs with
build.py's cache (its venv, the tiny puppet model by default: ``--weights``), as puppet_check.py
starts it, with the chat template ``puppet_check.template_for`` picks (the family's own shape where
there is one, else a plain one: the processor writes every answer, so the template only renders the
conversation). By default every format of the catalog, one server each, and each request sent again
with ``stream`` flipped (``--differential``: a scripted answer must not depend on streaming, the
one judge of near misses that have no truth), under ``strategies/vllm-puppet.toml`` (the whole
request surface on scripted requests). Every finding is a bundle under OUT/PARSER with the
command that found it (``found_by``). Prints one line per parser (examples, requests, seconds,
findings, and the scripts the processor abandoned because the server's grammar forbade them: those
answers are the model's, and findings on them are not the server's by default) and writes them all
to OUT/campaigns.json. Exit 0 when every campaign ran (findings or not), 2 when agentfuzz itself
failed, 3 when a parser's server could not be started (the other parsers still run); with
``--skip-unbuilt``, one line and 0 on a machine whose build.py could not run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _kit import ServerError
from puppet_check import MODEL, puppet_server, server_options

from agentfuzz.puppet.formats import FORMATS

# Every format of the catalog: one vLLM tool parser each.
PARSERS = tuple(FORMATS)
# The fuzz profile unless --fuzz-args names one: the whole surface, vLLM's own fields too.
PROFILE = "vllm-puppet"
# What the processor logs when the server's own constraint (a grammar) forbids a script's token:
# that request was answered by the model, not the script, so its findings may be the model's.
ABANDONED = "stops being forced"


def campaign(args: argparse.Namespace, parser: str) -> dict[str, object]:
    """Start vLLM with ``parser`` and the processor; fuzz it with ``--puppet parser``."""
    out = args.out / parser
    log = args.logs / f"puppet-campaign-{parser}.log"
    with puppet_server(args, parser, log) as base:
        started = time.monotonic()
        fuzz = [str(Path(sys.executable).with_name("agentfuzz")), "fuzz", "--base-url", base]
        fuzz += ["--model", MODEL, "--puppet", parser, "--max-time", str(args.max_time)]
        fuzz += ["--max-examples", str(args.max_examples), "--timeout", "120", "--quiet"]
        fuzz += ["--out", str(out), *args.fuzz_args.split()]
        if "--profile" not in fuzz:
            fuzz += ["--profile", PROFILE]
        if args.differential and "--differential" not in fuzz:
            fuzz.append("--differential")
        done = subprocess.run(fuzz, capture_output=True, text=True, check=False)
        seconds = round(time.monotonic() - started)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{parser}: agentfuzz exit {done.returncode}\n{done.stdout}{done.stderr}")
    summary = json.loads((out / "summary.json").read_text())
    return {
        "parser": parser,
        "weights": args.weights,
        "examples": sum(summary["examples"].values()),
        "requests": summary["requests"],
        "seconds": seconds,
        "findings": [f["signature"] for f in summary["findings"]],
        "abandoned": log.read_text(errors="replace").count(ABANDONED),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    server_options(parser)
    parser.add_argument("--parsers", default=",".join(PARSERS), help="comma-separated")
    parser.add_argument("--max-time", type=float, default=240.0, help="seconds per parser")
    parser.add_argument("--max-examples", type=int, default=100, help="per mode, per parser")
    parser.add_argument("--out", type=Path, default=Path(".cache/live-vllm-puppet-out"))
    parser.add_argument("--fuzz-args", default="", help="more for agentfuzz fuzz: '--api chat'")
    parser.add_argument(
        "--no-differential",
        dest="differential",
        action="store_false",
        help="send each request once (by default again with stream flipped: stream_divergence)",
    )
    parser.add_argument(
        "--skip-unbuilt",
        action="store_true",
        help="one line and exit 0 when build.py's cache is not there (no package index)",
    )
    args = parser.parse_args(argv)
    built = (args.cache / "venv.done").exists() and (args.cache / args.weights).is_dir()
    if args.skip_unbuilt and not built:
        print(f"live-vllm-puppet: skipped: {args.cache} holds no built server (build.py)")
        return 0
    unknown = [name for name in args.parsers.split(",") if name not in FORMATS]
    if unknown:
        print(f"puppet_campaign.py: not formats of the catalog: {', '.join(unknown)}")
        return 2
    args.logs = args.logs or args.cache
    args.logs.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, object]] = []
    for name in args.parsers.split(","):
        try:
            rows.append(campaign(args, name))
        except ServerError as exc:  # one parser's server: the others still run
            rows.append({"parser": name, "weights": args.weights, "error": str(exc)})
        print(_line(rows[-1]), flush=True)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "campaigns.json").write_text(json.dumps(rows, indent=1) + "\n")
    return 3 if any("error" in row for row in rows) else 0


def _line(row: dict[str, object]) -> str:
    if "error" in row:
        return f"{row['parser']}: not served: {row['error']}"
    line = (
        f"{row['parser']}: {row['examples']} examples, {row['requests']} requests in "
        f"{row['seconds']} s, findings: {row['findings']}"
    )
    if row["abandoned"]:
        line += f"; {row['abandoned']} script(s) abandoned under the server's grammar (see its log)"
    return line


if __name__ == "__main__":
    sys.exit(main())
