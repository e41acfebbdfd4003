"""Silence of the puppet oracles: scripted examples against the faithful reference server.

For every tool-call format the reference server reads (``agentfuzz serve puppet
--tool-call-parser NAME``), runs ``agentfuzz fuzz --puppet NAME`` against it on every api/stream
mode, each request sent again with ``stream`` flipped (``--differential``: a scripted answer
must not depend on streaming), and counts the findings. The server parses each script with its
own reader of the format and answers faithfully, so every finding here is a false positive of
agentfuzz's (the oracle, the catalog's truth or the strategy), the worst bug a fuzzer can have.
Then the same against each planted profile, which must be found
(tests/reference/test_puppet_fuzz.py).

    python bench/puppet_silence.py                     # 10,000 examples over the formats
    python bench/puppet_silence.py --examples 2000     # a quick look
    python bench/puppet_silence.py --out DIR           # and keep the bundles of any finding

Prints one line per format: examples, requests, findings (which must be 0) and seconds.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import agentfuzz_command

PLANTED = (
    "puppet-marker-in-string",
    "puppet-prose-dropped",
    "puppet-second-call-dropped",
    "puppet-args-retyped",
    "puppet-cut-complete",
    "puppet-stream-swallows",
)


def _run(serve: str, fmt: str, examples: int, out: Path) -> tuple[dict[str, Any], float]:
    argv = [*agentfuzz_command(), "fuzz", "--serve", serve, "--puppet", fmt, "--quiet"]
    argv += ["--max-examples", str(examples), "--seed", "1", "--out", str(out), "--differential"]
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{serve} {fmt}: exit {done.returncode}\n{done.stdout}{done.stderr}")
    return json.loads((out / "summary.json").read_text()), seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000, help="over all formats")
    parser.add_argument("--formats", help="comma-separated; default: every one the server reads")
    parser.add_argument("--out", type=Path, help="keep each run's bundles here (default: none)")
    args = parser.parse_args(argv)
    from agentfuzz.reference.readers import READERS

    formats = args.formats.split(",") if args.formats else sorted(READERS)
    # Per format and mode (four modes), so the whole run sends at least ``--examples``.
    each = max(1, -(-args.examples // (len(formats) * 4)))
    total = 0
    print("| format | examples | requests | findings | seconds |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in formats:
            summary, seconds = _run("puppet", fmt, each, (args.out or Path(tmp)) / fmt)
            count = len(summary["findings"])
            sent = sum(summary["examples"].values())
            total += sent
            print(f"| {fmt} | {sent} | {summary['requests']} | {count} | {seconds:.0f} |")
            sys.stdout.flush()
    print(f"\n{total} scripted examples in all.\n")
    print("| planted profile (hermes) | examples | findings |")
    print("|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for serve in PLANTED:
            summary, _ = _run(serve, "hermes", 100, Path(tmp) / serve)
            found = [f["signature"] for f in summary["findings"]]
            examples = sum(summary["examples"].values())
            print(f"| {serve} | {examples} | {', '.join(found) or 'none'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
