"""Throughput against the live vLLM (CPU) target: 1 worker vs 4, the same budget each.

    python bench/live_vllm.py [--seconds 120] [--results bench/results.md]

Builds (or reuses) `.cache/live-vllm` through `live/vllm/build.py`, starts the server once, and
runs `agentfuzz fuzz --profile vllm-cpu --api chat --no-stream --max-time SECONDS` with
`--workers 1` and then `--workers 4`. The figure is requests answered per second of the run: a
real model's pace, where the server batches the requests it has in flight. No goal: the issue
asks for the figures, and the ratio says how much of the batching a client gets.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import BENCH, ROOT, agentfuzz_command, load, machine, publish

sys.path.insert(0, str(ROOT / "live" / "vllm"))
from serve import DEFAULT_CACHE, MODEL_NAME, running


def _run(base_url: str, workers: int, seconds: float, where: Path) -> dict[str, float]:
    out = where / f"out-{workers}"
    argv = [*agentfuzz_command(), "fuzz", "--base-url", base_url, "--model", MODEL_NAME]
    argv += ["--profile", "vllm-cpu", "--api", "chat", "--no-stream", "--seed", "0", "--quiet"]
    argv += ["--max-examples", "1000", "--max-time", str(seconds), "--timeout", "300"]
    argv += ["--workers", str(workers), "--out", str(out)]
    done = subprocess.run(argv, cwd=where, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"live_vllm.py: agentfuzz exited {done.returncode}: {done.stderr[-300:]}")
    summary = json.loads((out / "summary.json").read_text())
    elapsed = float(summary["elapsed_s"])
    examples = sum(summary["examples"].values())
    return {"requests": summary["requests"], "examples": examples, "elapsed": elapsed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0, help="--max-time of each run")
    parser.add_argument("--results", type=Path, default=BENCH / "results.md")
    args = parser.parse_args(argv)
    built = subprocess.run([sys.executable, str(ROOT / "live" / "vllm" / "build.py")], check=False)
    if built.returncode != 0:
        return built.returncode
    started = datetime.datetime.now().astimezone()
    before = load()
    runs = {}
    with running(DEFAULT_CACHE) as base_url, tempfile.TemporaryDirectory() as tmp:
        for workers in (1, 4):
            print(f"measuring --workers {workers} ...", file=sys.stderr, flush=True)
            runs[workers] = _run(base_url, workers, args.seconds, Path(tmp))
    rate = {w: r["requests"] / r["elapsed"] for w, r in runs.items()}
    date = started.strftime("%Y-%m-%d %H:%M %Z")
    lines = [
        f"Run {date}: live vLLM 0.32.0 (CPU, SmolLM2-135M), load average {before} before, "
        f"{load()} after; {machine()}.",
        "",
        "| workers | requests | examples | seconds | requests/s |",
        "|---|---|---|---|---|",
        *(
            f"| {w} | {r['requests']:.0f} | {r['examples']:.0f} | {r['elapsed']:.0f} | "
            f"{rate[w]:.2f} |"
            for w, r in runs.items()
        ),
        "",
        f"4 workers vs 1: {rate[4] / rate[1]:.1f}x the requests per second.",
    ]
    publish(args.results, f"{date} (live vLLM)", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
