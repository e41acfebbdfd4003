"""Fuzz every mode a live target ships, one campaign per mode, and print what each found.

`python live/matrix.py TARGET [--modes a,b] [--max-time S] [--max-examples N] [--out DIR] ...`

TARGET is `vllm` (its tool parsers, `--parser`), `llamacpp` (its chat formats, `--chat-format`) or
`litellm` (its Responses modes, `--proxy-mode`, with its model under an alias). Each mode runs the
target's own campaign.py with the same budget, into `--out/<mode>`, after building the target
once. Then a table, printed and written to
`--out/matrix.md`: mode, requests, examples, coverage of the request surface, and the findings by
oracle and signature.

Exit: 0 when every mode ran (findings included: they are what this is for), else the first
broken campaign's code; a mode that broke is a row saying so, and the others still run.
`--skip-offline` turns "cannot reach the package index" into a skip with one line (exit 0).
Run it with the interpreter agentfuzz is installed in.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LIVE = Path(__file__).resolve().parent
EXIT_OFFLINE = 3


@dataclass(frozen=True)
class Target:
    script: str  # its campaign.py, relative to live/
    flag: str  # the campaign's option choosing a mode
    names: str  # the tuple of its modes in the target's serve.py
    extra: tuple[str, ...] = ()

    def modes(self) -> tuple[str, ...]:
        """The modes, read from serve.py rather than imported: each serve.py puts its own
        folder on sys.path."""
        namespace: dict[str, Any] = {}
        serve = LIVE / Path(self.script).parent / "serve.py"
        for line in serve.read_text().splitlines():
            if line.startswith(f"{self.names} = "):
                exec(line, namespace)  # a literal tuple of strings
                break
        modes = namespace.get(self.names)
        if not isinstance(modes, tuple) or not all(isinstance(m, str) for m in modes):
            raise SystemExit(f"matrix.py: {serve} has no {self.names} tuple of mode names")
        return modes


TARGETS = {
    "vllm": Target("vllm/campaign.py", "--parser", "PARSERS"),
    # Past the known grammar crash (FINDINGS.md), which ends a campaign in minutes in any format.
    "llamacpp": Target(
        "llamacpp/campaign.py",
        "--chat-format",
        "FORMATS",
        ("--profile", os.path.relpath(LIVE / "llamacpp" / "no-crash.toml")),
    ),
    # Behind the reference server only (--no-vllm): the proxy's faults, not vLLM's; behind
    # `fixed` and the two profiles answering with odd shapes.
    "litellm": Target(
        "litellm/campaign.py",
        "--proxy-mode",
        "MODES",
        ("--alias", "agentfuzz-alias", "--no-vllm", "--backends", "fixed,call-unnamed,hosted-call"),
    ),
}


@dataclass
class Row:
    mode: str
    code: int
    requests: int = 0
    examples: int = 0
    dimensions: int = 0
    refused: int = 0
    findings: Counter[str] | None = None

    def cells(self) -> list[str]:
        if self.code not in (0, 1):
            return [self.mode, "-", "-", "-", f"broken: campaign exited {self.code}"]
        coverage = f"{self.dimensions} dimensions, {self.refused} always refused"
        found = ", ".join(f"{s} ×{n}" for s, n in sorted((self.findings or Counter()).items()))
        return [self.mode, str(self.requests), str(self.examples), coverage, found or "none"]


def read(mode: str, code: int, out: Path) -> Row:
    """What the campaigns of one mode wrote under `out` (a target may run several, one per
    backend): their summaries, added up."""
    row = Row(mode, code, findings=Counter())
    covered: dict[str, list[int]] = {}
    for path in sorted(out.rglob("summary.json")):
        if ".shards" in path.parts:
            continue
        summary = json.loads(path.read_text())
        row.requests += summary.get("requests", 0)
        row.examples += sum(summary.get("examples", {}).values())
        for name, seen in summary.get("coverage", {}).items():
            total = covered.setdefault(name, [0, 0])
            total[0] += seen.get("requests", 0)
            total[1] += seen.get("refused", 0)
        for finding in summary.get("findings", []):
            assert row.findings is not None
            row.findings[finding.get("signature", "?")] += 1
    row.dimensions = sum(1 for used, _ in covered.values() if used)
    row.refused = sum(1 for used, refused in covered.values() if used and used == refused)
    return row


def table(target: str, rows: list[Row]) -> str:
    head = ["mode", "requests", "examples", "coverage", "findings (signature ×bundles)"]
    lines = [f"## {target}", "", "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", choices=sorted(TARGETS))
    parser.add_argument("--modes", default=None, help="a,b,...: default every mode it ships")
    parser.add_argument("--max-time", type=float, default=300.0, help="seconds per mode")
    parser.add_argument("--max-examples", type=int, default=100000, help="per mode")
    parser.add_argument("--out", type=Path, default=None, help="default agentfuzz-out/matrix-T")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=None, help="default: the target's own")
    parser.add_argument("--skip-offline", action="store_true")
    args = parser.parse_args(argv)
    target = TARGETS[args.target]
    ships = target.modes()
    modes = ships if args.modes is None else tuple(args.modes.split(","))
    unknown = [m for m in modes if m not in ships]
    if unknown:
        parser.error(f"{args.target} has no mode {unknown[0]!r} (known: {', '.join(ships)})")
    out: Path = args.out or Path(f"agentfuzz-out/matrix-{args.target}")
    # Built once, here: a campaign's own exit 3 would be agentfuzz's "unreachable".
    build = LIVE / Path(target.script).parent / "build.py"
    cache = ["--cache", str(args.cache.resolve())] if args.cache else []
    built = subprocess.run([sys.executable, str(build), *cache]).returncode
    if built == EXIT_OFFLINE and args.skip_offline:
        print(f"matrix: {args.target}: skipped: cannot reach the package index to build it")
        return 0
    if built != 0:
        return built
    rows = []
    for mode in modes:
        folder = out / mode
        argv_ = [
            sys.executable,
            str(LIVE / target.script),
            target.flag,
            mode,
            *target.extra,
            *cache,
        ]
        argv_ += ["--out", str(folder), "--max-time", str(args.max_time), "--findings-ok"]
        argv_ += ["--max-examples", str(args.max_examples), "--seed", str(args.seed)]
        print(f"matrix: {args.target} {mode}", flush=True)
        code = subprocess.run(argv_).returncode
        rows.append(read(mode, code, folder))
    text = table(args.target, rows)
    out.mkdir(parents=True, exist_ok=True)
    (out / "matrix.md").write_text(text)
    print(text, end="")
    broken = [row.code for row in rows if row.code not in (0, 1)]
    return broken[0] if broken else 0


if __name__ == "__main__":
    sys.exit(main())
