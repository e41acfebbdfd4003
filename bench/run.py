"""Run every agentfuzz benchmark once and report each figure against its goal.

    python bench/run.py [--quick] [--results bench/results.md]

Prints a markdown table (date, machine, measurement, command, figure, goal, pass/miss) and appends
it, with the machine's load before and after, to the results file. Exit status is 0 whether or not
goals are met: a benchmark reports, it does not gate.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Callable
from pathlib import Path

# Run as a script (``python bench/run.py``): the helpers sit beside it, not in a package.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import BENCH, Row, load, machine, table
from _measure import first_failure, overhead, replay_rate, scaling, shrink_cost


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="fewer examples and seeds (a smoke run)"
    )
    parser.add_argument("--results", type=Path, default=BENCH / "results.md")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    quick = args.quick
    started = datetime.datetime.now().astimezone()
    load_before = load()
    rows: list[Row] = []
    steps: tuple[tuple[str, Callable[[], list[Row]]], ...] = (
        ("overhead", lambda: [overhead(100 if quick else 400)]),
        # The same at a server's pace: what the overhead costs against a real model.
        ("overhead at 50 ms", lambda: [overhead(30 if quick else 150, latency_ms=50)]),
        # Few examples per worker (start-up weighs), then more (closer to a long live run).
        ("scaling", lambda: [scaling(20 if quick else 100), *([] if quick else [scaling(300)])]),
        ("first failure", lambda: first_failure(3 if quick else 10)),
        ("shrink cost", lambda: [shrink_cost(1 if quick else 3)]),
        ("replay", lambda: [replay_rate(1 if quick else 5)]),
    )
    for name, step in steps:
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        rows += step()
    date = started.strftime("%Y-%m-%d %H:%M %Z")
    text = table(rows, date, machine())
    about = (
        f"Run {date}{' (--quick)' if quick else ''}: load average {load_before} before, "
        f"{load()} after; Python {sys.version.split()[0]}."
    )
    print(about)
    print()
    print(text)
    results: Path = args.results
    if not results.exists():
        results.write_text("# Benchmark runs\n\nAppended by `python bench/run.py`.\n")
    with results.open("a", encoding="utf-8") as out:
        out.write(f"\n## {date}\n\n{about}\n\n{text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
