"""Requests per second against real vLLM on this CPU: SmolLM2 sampling vs the puppet, in one run.

    python bench/puppet_rate.py [--seconds 60] [--parser hermes] [--results bench/results.md]

Builds (or reuses) `.cache/live-vllm` through `live/vllm/build.py`, then three arms, one server
each, every server vLLM 0.32.0 with the puppet processor and the same tool parser:

- **sampling**: plain SmolLM2-135M, `agentfuzz fuzz --profile vllm-cpu` (no scripts: the model
  samples every answer, as the live campaigns ran before the puppet);
- **puppet, SmolLM2**: SmolLM2 with the markers as tokens, `agentfuzz fuzz --puppet PARSER`;
- **puppet, tiny**: the two-layer puppet model, `agentfuzz fuzz --puppet PARSER`.

Each arm runs `--api chat --no-stream --seed 0` for SECONDS. The figures: requests answered per
second of the run and the median seconds per request (agentfuzz's own latency figures). No
goal.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import BENCH, ROOT, agentfuzz_command, load, machine, publish

sys.path.insert(0, str(ROOT / "live" / "vllm"))
from puppet_check import MODEL, puppet_server, server_options

# (label, build.py's model folder, what agentfuzz drives it with)
ARMS = (
    ("sampling, SmolLM2", "model", ("--profile", "vllm-cpu")),
    ("puppet, SmolLM2", "puppet-smollm2", ("--puppet", "{parser}")),
    ("puppet, tiny", "puppet-tiny", ("--puppet", "{parser}")),
)


def _arm(base: str, driven: tuple[str, ...], seconds: float, out: Path) -> dict[str, Any]:
    argv = [*agentfuzz_command(), "fuzz", "--base-url", base, "--model", MODEL, *driven]
    argv += ["--api", "chat", "--no-stream", "--seed", "0", "--quiet", "--timeout", "300"]
    argv += ["--max-examples", "100000", "--max-time", str(seconds), "--out", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        said = done.stderr[-300:]
        raise SystemExit(f"puppet_rate.py: agentfuzz exited {done.returncode}: {said}")
    summary = json.loads((out / "summary.json").read_text())
    p50 = summary["latency"].get("chat/no-stream", {}).get("p50_s")
    return {"requests": summary["requests"], "elapsed": float(summary["elapsed_s"]), "p50": p50}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    server_options(parser)
    parser.add_argument("--seconds", type=float, default=60.0, help="--max-time of each arm")
    parser.add_argument("--parser", default="hermes", help="the tool parser every arm serves")
    parser.add_argument("--results", type=Path, default=BENCH / "results.md")
    args = parser.parse_args(argv)
    built = subprocess.run([sys.executable, str(ROOT / "live" / "vllm" / "build.py")], check=False)
    if built.returncode != 0:
        return built.returncode
    started = datetime.datetime.now().astimezone()
    before = load()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        args.logs = args.logs or Path(tmp)
        for label, weights, driven in ARMS:
            print(f"measuring {label} ...", file=sys.stderr, flush=True)
            args.weights = weights
            out = Path(tmp) / weights
            with puppet_server(args, args.parser, args.logs / f"rate-{weights}.log") as base:
                driving = tuple(d.format(parser=args.parser) for d in driven)
                arm = _arm(base, driving, args.seconds, out)
            rows.append((label, arm))
    date = started.strftime("%Y-%m-%d %H:%M %Z")
    lines = [
        f"Run {date}: vLLM 0.32.0 (CPU) with the puppet processor and the {args.parser} parser, "
        f"{args.seconds:.0f} s an arm; load average {before} before, {load()} after; {machine()}.",
        "",
        "| arm | requests | seconds | requests/s | median s per request |",
        "|---|---|---|---|---|",
    ]
    for label, arm in rows:
        rate = arm["requests"] / arm["elapsed"]
        figures = f"{arm['requests']:.0f} | {arm['elapsed']:.0f} | {rate:.2f} | {arm['p50']}"
        lines.append(f"| {label} | {figures} |")
    publish(args.results, f"{date} (puppet vs sampling, live vLLM)", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
