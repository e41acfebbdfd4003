"""Where the time goes in the two hot paths the benchmarks time: fuzzing (1) and replay (5).

    python bench/hotspots.py [--top 15]

Samples with pyinstrument (``pip install pyinstrument``; not a dependency of agentfuzz) and prints,
for each path, the functions with the most inclusive time (a recursive function counted once per
stack) and the most self time, each as a share of the whole.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, served
from _measure import _config

from agentfuzz.runs import campaign
from agentfuzz.tape.replay import cassette_files, replay_cassette


def _name(frame: Any) -> str:
    path = str(frame.file_path or "")
    for marker in ("site-packages/", "/agentfuzz/", "/lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{frame.function} ({path}:{frame.line_no})"


# Frames worth a line of their own even below Hypothesis's deep stacks: our code, and the
# libraries each request or cassette goes through.
_OURS = (
    "(engine.py",
    "(target.py",
    "(dialects/",
    "(oracles/",
    "(transport/",
    "(strategies/",
    "(replay.py",
    "(reduction.py",
    "(repro.py",
    "yaml/__init__",
    "vcr/",
    "httpx/_client.py",
    "_ssl",
    "ssl.py",
    "SSLContext",
    "pydantic",
    "SchemaValidator",
)


def _ours(name: str) -> bool:
    return any(marker in name for marker in _OURS)


def _walk(frame: Any, seen: tuple[str, ...], inclusive: Counter[str], own: Counter[str]) -> None:
    children = [c for c in frame.children if not c.is_synthetic]
    name = _name(frame)
    if name not in seen:  # recursion: the outermost call already holds the inner ones' time
        inclusive[name] += frame.time
    own[name] += frame.time - sum(c.time for c in children)
    for child in children:
        _walk(child, (*seen, name), inclusive, own)


def profile(label: str, work: Callable[[], object], top: int) -> None:
    """Run ``work`` under the sampler and print its heaviest functions."""
    from pyinstrument import Profiler

    profiler = Profiler(interval=0.0005)
    profiler.start()
    work()
    session = profiler.stop()
    root = session.root_frame()
    if root is None:
        print(f"{label}: no samples")
        return
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    _walk(root, (), inclusive, own)
    total = root.time
    print(f"\n## {label}: {total:.2f} s sampled\n")
    print("inclusive:")
    for name, seconds in inclusive.most_common(top):
        print(f"  {100 * seconds / total:5.1f}%  {name}")
    print("agentfuzz and its client libraries, inclusive:")
    ours = [kv for kv in inclusive.most_common() if _ours(kv[0])]
    for name, seconds in ours[:top]:
        print(f"  {100 * seconds / total:5.1f}%  {name}")
    print("self:")
    for name, seconds in own.most_common(top):
        print(f"  {100 * seconds / total:5.1f}%  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--examples", type=int, default=300)
    args = parser.parse_args()
    with served("fixed") as (base, model), tempfile.TemporaryDirectory() as tmp:
        warm = _config(base, model, Path(tmp), "chat", False, max_examples=20, seed=99)
        campaign.run_unfolded(warm)
        config = _config(base, model, Path(tmp), "chat", False, max_examples=args.examples, seed=1)
        profile(
            "1. engine.run chat/no-stream on `fixed`",
            lambda: campaign.run_unfolded(config),
            args.top,
        )
    files = cassette_files([ROOT / "cassettes"])
    for path in files:
        replay_cassette(path)

    def replay_all() -> None:
        for _ in range(3):
            for path in files:
                replay_cassette(path)

    profile(f"5. replay_cassette x3 over {len(files)} cassettes", replay_all, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
