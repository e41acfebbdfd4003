"""Silence over the whole surface: 10,000 examples against the ``fixed`` reference server, and
through a faithful pass-through proxy to it, with every dimension of the request surface and
every relation on (the profile's relations, and ``--differential``'s stream twin on every
request).

A correct server (and a proxy that changes nothing) must give no finding at all: any bundle
here is a false positive of agentfuzz's, the worst bug a fuzzer can have. This is a check that
takes minutes, not a timing: it prints, per run, the examples and requests sent, the findings
(which must be none), and how the server answered each dimension (the coverage table).

    python bench/silence.py                 # 2,500 examples per api/stream mode, every run
    python bench/silence.py --examples 250  # a quick look

The profile is ``strategies/default.toml`` with the server extensions added (``--profile``
takes another). The direct run uses two workers; middleman mode runs with one (its backend log is
one per process). A third run sends sessions (``--mode session``, a fifth as many, each several
turns), whose turns draw the same surface, each beginning from the server's own answers.
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

from _common import ROOT, agentfuzz_command, served

sys.path.insert(0, str(ROOT / "tests" / "proxy"))
from planted_proxy import free_port, planted_proxy


def _everything(into: Path) -> Path:
    """The default profile with every dimension on, server extensions included."""
    text = (ROOT / "strategies" / "default.toml").read_text()
    path = into / "everything.toml"
    path.write_text(text.replace("surface = [\n", 'surface = [\n  "sampler_extensions",\n', 1))
    return path


def _fuzz(base: str, out: Path, profile: Path, examples: int, *extra: str) -> dict[str, Any]:
    argv = [
        *agentfuzz_command(), "fuzz", "--base-url", base, "--profile", str(profile),
        "--max-examples", str(examples), "--seed", "1", "--out", str(out), "--quiet", *extra,
    ]  # fmt: skip
    began = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True)
    summary = json.loads((out / "summary.json").read_text())
    return {
        "code": done.returncode,
        "seconds": time.monotonic() - began,
        "summary": summary,
        "bundles": sorted(p.parent.name for p in out.glob("*/repro.json")),
        "stderr": done.stderr.strip(),
    }


def _report(name: str, run: dict[str, Any]) -> bool:
    summary = run["summary"]
    examples = summary.get("examples", {})
    total = sum(examples.values()) if isinstance(examples, dict) else examples
    print(f"\n## {name}: exit {run['code']}, {run['seconds']:.0f} s")
    print(f"examples {total} ({examples}), requests {summary.get('requests')}")
    print(f"findings: {len(run['bundles'])} {run['bundles'][:10]}")
    coverage = summary.get("coverage", {})
    print("| dimension | requests | 2xx | 4xx | 5xx | failed | slow |")
    print("|---|---|---|---|---|---|---|")
    for dim, row in coverage.items():
        cells = [row.get(k, 0) for k in ("requests", "ok", "refused", "error", "failed", "slow")]
        print(f"| {dim} | " + " | ".join(str(c) for c in cells) + " |")
    if run["stderr"]:
        print(f"stderr: {run['stderr'][:300]}")
    return run["code"] == 0 and not run["bundles"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2500, help="per api/stream mode")
    parser.add_argument("--profile", type=Path, help="a fuzz profile (default: everything on)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        profile = args.profile or _everything(work)
        with served("fixed") as (base, _model):
            direct = _fuzz(
                base, work / "direct", profile, args.examples, "--workers", "2", "--differential"
            )
            sessions = _fuzz(
                base, work / "sessions", profile, max(1, args.examples // 5),
                "--mode", "session", "--workers", "2", "--differential",
            )  # fmt: skip
        port = free_port()
        with planted_proxy(port, "faithful") as url:
            proxied = _fuzz(
                url, work / "proxy", profile, args.examples,
                "--backend", "fixed", "--backend-port", str(port), "--differential",
            )  # fmt: skip
        silent = [
            _report("fixed, direct", direct),
            _report("fixed, sessions", sessions),
            _report("fixed, faithful proxy", proxied),
        ]
    print("\nsilent" if all(silent) else "\nNOT SILENT: every bundle above is a false positive")
    return 0 if all(silent) else 1


if __name__ == "__main__":
    raise SystemExit(main())
