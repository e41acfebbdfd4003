"""How many examples each seed profile's bug takes to find, per fuzz seed (issue 41 item 11).

    python bench/seeds_found.py [--seeds 1-5] [--cap 300] [--profile default] [--no-openings]

For every seed profile of the README (``tests/reference/test_fuzz_seed_profiles.py`` lists them,
each with the mode its row names and the oracle that finds it) and every ``--seed``, runs the
engine (``runs.campaign.run_unfolded``, as ``agentfuzz fuzz --serve PROFILE --api A --stream|
--no-stream --seed N`` does, no example database) until the first finding of that oracle is
offered, and prints a markdown table of the examples run by then, the finding one included. A
run that finds nothing within ``--cap`` examples shows ``>cap``. The goal: 50 or fewer on every
seed. The server is the embedded one in a thread (only the count matters here, not the time).
``--no-openings`` leaves out the run's openings (``strategies.openings``, each skeleton's
plainest case first): what Hypothesis's own draws reach, seed by seed.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentfuzz import FuzzConfig
from agentfuzz.model.history import Api
from agentfuzz.output.findings.status import Status
from agentfuzz.output.findings.store import FindingStore
from agentfuzz.reference import serve_in_thread
from agentfuzz.request.profiles import load_profile
from agentfuzz.runs import campaign, engine

# (reference profile, api, stream, the oracle that finds its bug): the README's seed profiles.
ROWS: tuple[tuple[str, Api, bool, str], ...] = (
    ("vllm-kimi-k2", "responses", True, "empty_turn"),
    ("vllm-kimi-k2", "chat", True, "index_gap"),
    ("vllm-kimi-k2-loose-fix", "chat", False, "empty_turn"),
    ("exo-kimi-k2", "chat", True, "error"),
    ("exo-kimi-k2", "chat", False, "error"),
    ("vllm-responses-regen", "responses", True, "identity"),
    ("vllm-gpt-oss", "responses", True, "identity"),
    ("no-tools-leak", "chat", False, "leaked_markup"),
)
GOAL = 50


class _Found(BaseException):
    """Stops a run at the finding looked for (Hypothesis lets a BaseException through)."""


@contextlib.contextmanager
def _stopping_at(oracle: str) -> Iterator[None]:
    """Inside the block, the first offer of an ``oracle`` violation raises ``_Found``."""
    original = FindingStore.offer

    def offer(self: FindingStore, violation: Any, *args: Any, **kw: Any) -> None:
        if violation.oracle == oracle:
            raise _Found
        original(self, violation, *args, **kw)

    FindingStore.offer = offer  # type: ignore[method-assign]
    try:
        yield
    finally:
        FindingStore.offer = original  # type: ignore[method-assign]


def examples_to_find(
    url: str, row: tuple[str, Api, bool, str], seed: int, cap: int, profile: str = "default"
) -> int | None:
    """Examples run until ``row``'s oracle first fires, that one included; None past ``cap``."""
    _, api, stream, oracle = row
    done = [0]

    def progress(status: Status) -> None:
        done[0] = status.examples

    with tempfile.TemporaryDirectory() as tmp:
        config = FuzzConfig(
            base_url=url,
            model="m",
            profile=load_profile(profile),
            out=Path(tmp),
            modes=((api, stream),),
            database=None,
            max_examples=cap,
            seed=seed,
        )
        try:
            with _stopping_at(oracle):
                campaign.run_unfolded(config, progress)
        except _Found:
            return done[0] + 1
    return None


def _seeds(text: str) -> list[int]:
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=_seeds, default=_seeds("1-5"), help="e.g. 1-5")
    parser.add_argument("--cap", type=int, default=300)
    parser.add_argument("--profile", default="default", help="the fuzz profile")
    parser.add_argument("--no-openings", action="store_true", help="Hypothesis's draws alone")
    args = parser.parse_args(argv)
    if args.no_openings:
        engine.openings = lambda *_: []  # type: ignore[attr-defined]
    seeds: list[int] = args.seeds
    print("| profile | mode | oracle | " + " | ".join(f"seed {s}" for s in seeds) + " | worst |")
    print("|---|---|---|" + "---|" * len(seeds) + "---|")
    for row in ROWS:
        name, api, stream, oracle = row
        with serve_in_thread(name) as url:
            counts = [examples_to_find(url, row, s, args.cap, args.profile) for s in seeds]
        shown = [str(c) if c is not None else f">{args.cap}" for c in counts]
        worst = max((c if c is not None else args.cap + 1) for c in counts)
        mode = f"{api}/{'stream' if stream else 'no-stream'}"
        verdict = "" if worst <= GOAL else " (miss)"
        print(f"| `{name}` | {mode} | `{oracle}` | " + " | ".join(shown) + f" | {worst}{verdict} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
