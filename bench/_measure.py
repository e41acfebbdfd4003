"""The five measurements, each returning rows of the results table.

Every measurement runs the real code paths: the engine (``runs.campaign.run_unfolded``) or the
``agentfuzz`` CLI against ``agentfuzz serve`` in its own process, and
``agentfuzz.tape.replay.replay_cassette`` over the committed cassettes. Hooks (a wrapped
``LiveTransport.send``, ``Target.observe`` or ``FindingStore.offer``) only count and capture;
they never change what is sent.
"""

from __future__ import annotations

import contextlib
import json
import statistics
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from _common import ROOT, Row, Stopwatch, agentfuzz_command, served

from agentfuzz import FuzzConfig, Report
from agentfuzz.model.history import Api, Case
from agentfuzz.output.findings.status import Status
from agentfuzz.output.findings.store import FindingStore
from agentfuzz.reduce.reduction import case_size
from agentfuzz.request.profiles import load_profile
from agentfuzz.runs import campaign
from agentfuzz.tape.replay import cassette_files, replay_cassette
from agentfuzz.wire.target import Target
from agentfuzz.wire.transport.live import LiveTransport


@contextlib.contextmanager
def wrapped(owner: Any, name: str, make: Callable[[Any], Any]) -> Iterator[None]:
    """Replace ``owner.name`` by ``make(original)`` inside the block."""
    original = getattr(owner, name)
    setattr(owner, name, make(original))
    try:
        yield
    finally:
        setattr(owner, name, original)


def _config(base: str, model: str, out: Path, api: Api, stream: bool, **kw: Any) -> FuzzConfig:
    return FuzzConfig(
        base_url=base,
        model=model,
        profile=load_profile("default"),
        out=out,
        modes=((api, stream),),
        database=None,
        **kw,
    )


def overhead(examples: int, seed: int = 1, latency_ms: int = 0) -> Row:
    """Examples/s through the engine vs a plain httpx loop posting the same bodies."""
    sent: list[tuple[str, dict[str, Any]]] = []

    def capture(original: Any) -> Any:
        def send(self: LiveTransport, path: str, body: dict[str, Any], stream: bool) -> Any:
            sent.append((self.base_url + path, body))
            return original(self, path, body, stream)

        return send

    with served("fixed", latency_ms) as (base, model), tempfile.TemporaryDirectory() as tmp:
        # The first run in a process pays for imports and strategy construction: not measured.
        campaign.run_unfolded(
            _config(base, model, Path(tmp), "chat", False, max_examples=20, seed=seed + 99)
        )
        config = _config(base, model, Path(tmp), "chat", False, max_examples=examples, seed=seed)
        with wrapped(LiveTransport, "send", capture), Stopwatch() as fuzz:
            report = campaign.run_unfolded(config)
        ran = sum(report.examples.values())
        headers = {"Content-Type": "application/json"}
        with httpx.Client(timeout=60) as client, Stopwatch() as plain:
            for url, body in sent:
                # A malformed body is sent as its text; an answer is read whole, never judged.
                raw = body if isinstance(body, str) else json.dumps(body)
                client.post(url, content=raw.encode(), headers=headers).read()
    fuzz_rate, plain_rate = ran / fuzz.seconds, len(sent) / plain.seconds
    ratio = fuzz_rate / plain_rate
    return Row(
        f"1. overhead (chat/no-stream, `fixed`, latency {latency_ms} ms)",
        f"engine.run max_examples={examples} seed={seed} vs httpx loop",
        f"{fuzz_rate:.0f} vs {plain_rate:.0f} ex/s = {ratio:.2f}",
        ">= 0.8",
        ratio >= 0.8,
    )


def _fuzz_cli(base: str, model: str, workers: int, examples: int, where: Path) -> tuple[float, int]:
    out = where / f"out-{workers}"
    argv = [*agentfuzz_command(), "fuzz", "--base-url", base, "--model", model, "--api", "chat"]
    argv += ["--no-stream", "--max-examples", str(examples), "--seed", "1", "--quiet"]
    argv += ["--workers", str(workers), "--out", str(out)]
    # Each command gets its own folder, so its example database starts empty.
    cwd = where / f"cwd-{workers}"
    cwd.mkdir()
    with Stopwatch() as clock:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-300:]}")
    summary = json.loads((out / "summary.json").read_text())
    return clock.seconds, sum(summary["examples"].values())


def scaling(examples: int, many: int = 8) -> Row:
    """Examples/s of the whole ``agentfuzz fuzz`` command, 1 worker vs ``many``, at 50 ms.

    Process start-up is included: with few examples per worker it weighs most.
    """
    with served("fixed", latency_ms=50) as (base, model), tempfile.TemporaryDirectory() as tmp:
        one_s, one_n = _fuzz_cli(base, model, 1, examples, Path(tmp))
        all_s, all_n = _fuzz_cli(base, model, many, examples, Path(tmp))
    one, several = one_n / one_s, all_n / all_s
    ratio = several / one
    return Row(
        "2. scaling (`--latency 50`)",
        f"agentfuzz fuzz --workers 1 vs {many}, --max-examples {examples}",
        f"{one:.1f} vs {several:.1f} ex/s = {ratio:.1f}x ({one_n} / {all_n} ex in "
        f"{one_s:.1f} / {all_s:.1f} s)",
        ">= 6x",
        ratio >= 6,
    )


class _FirstFinding(BaseException):
    """Stops a run at its first finding (Hypothesis lets a BaseException through)."""


SEED_TARGETS: tuple[tuple[str, Api, bool], ...] = (
    ("vllm-kimi-k2", "responses", True),
    ("exo-kimi-k2", "chat", False),
    ("vllm-responses-regen", "responses", True),
    ("vllm-gpt-oss", "responses", True),
    ("no-tools-leak", "chat", False),
)


def first_failure(seeds: int = 10, cap: int = 300) -> list[Row]:
    """Median seconds and examples until the first finding is offered, per seed profile."""
    rows = []
    for profile, api, stream in SEED_TARGETS:
        seconds: list[float] = []
        counts: list[int] = []
        with served(profile) as (base, model), tempfile.TemporaryDirectory() as tmp:
            for seed in range(seeds):
                seen = [0]

                def progress(status: Status, seen: list[int] = seen) -> None:
                    seen[0] = status.examples

                def stop(original: Any) -> Any:
                    def offer(*args: Any, **kw: Any) -> None:
                        raise _FirstFinding

                    return offer

                config = _config(base, model, Path(tmp), api, stream, max_examples=cap, seed=seed)
                with (
                    wrapped(FindingStore, "offer", stop),
                    Stopwatch() as clock,
                    contextlib.suppress(_FirstFinding),
                ):
                    campaign.run_unfolded(config, progress)
                    seen[0] = cap + 1  # none found within the cap: counts as a miss
                seconds.append(clock.seconds)
                counts.append(seen[0])
        median_s, median_n = statistics.median(seconds), statistics.median(counts)
        mode = f"{api}/{'stream' if stream else 'no-stream'}"
        rows.append(
            Row(
                f"3. first failure: {profile}",
                f"engine.run {mode} seeds 0-{seeds - 1}",
                f"median {median_s:.2f} s, {median_n:g} ex (max {max(seconds):.2f} s, "
                f"{max(counts)} ex)",
                "<= 2 s and <= 50 ex",
                median_s <= 2 and median_n <= 50,
            )
        )
    return rows


@dataclass
class Shrink:
    """How one run's first empty_turn finding was shrunk, in target calls after its first offer."""

    to_minimum: int  # until the stored history reached its final size (items + calls)
    to_final: int  # until the stored case stopped changing at all (texts emptied, ids renamed)
    size: int
    input_items: int


def _shrink_once(base: str, model: str, seed: int, where: Path) -> Shrink:
    calls = [0]
    log: list[tuple[int, tuple[str, str], Case]] = []

    def count(original: Any) -> Any:
        def observe(self: Target, case: Case) -> Any:
            calls[0] += 1
            return original(self, case)

        return observe

    def watch(original: Any) -> Any:
        def offer(self: FindingStore, violation: Any, *args: Any, **kw: Any) -> None:
            original(self, violation, *args, **kw)
            log.append((calls[0], violation.key, self.by_key[violation.key].case))

        return offer

    config = _config(base, model, where / str(seed), "responses", True, seed=seed)
    with wrapped(Target, "observe", count), wrapped(FindingStore, "offer", watch):
        report: Report = campaign.run_unfolded(config)
    key = next(k for _, k, _ in log if k[0] == "empty_turn")
    final = next(f for f in report.findings if f.violation.key == key).case
    mine = [(c, case) for c, k, case in log if k == key]
    first = mine[0][0]
    minimum = next(c for c, case in mine if case.history.size == final.history.size)
    done = next(c for c, case in mine if case_size(case) == case_size(final))
    body = next(f for f in report.findings if f.violation.key == key).observation.exchange.request
    wire = body.get("input")
    return Shrink(
        minimum - first,
        done - first,
        final.history.size,
        len(wire) if isinstance(wire, list) else -1,
    )


def shrink_cost(seeds: int = 3) -> Row:
    """Target calls from the first empty_turn offer to its known minimum (seed 000's server)."""
    with served("vllm-kimi-k2") as (base, model), tempfile.TemporaryDirectory() as tmp:
        runs = [_shrink_once(base, model, seed, Path(tmp)) for seed in range(seeds)]
    to_min = [r.to_minimum for r in runs]
    to_final = [r.to_final for r in runs]
    sizes = sorted({r.size for r in runs})
    inputs = sorted({r.input_items for r in runs})
    median = statistics.median(to_min)
    return Row(
        "4. shrink cost: vllm-kimi-k2 responses/stream",
        f"engine.run seeds 0-{seeds - 1}, first empty_turn",
        f"median {median:g} calls to size {'/'.join(map(str, sizes))} "
        f"({', '.join(map(str, to_min))}); to the final bundle "
        f"{', '.join(map(str, to_final))}; input items {'/'.join(map(str, inputs))}",
        "<= 200 calls, size 4",
        median <= 200 and sizes == [4],
    )


def replay_rate(rounds: int = 5) -> Row:
    """Recorded exchanges re-checked through every oracle per second, cassettes loaded each time.

    Each round replays every cassette once and is timed on its own; the figure is the median
    round, so a burst of other work on a shared machine moves it less than a total would.
    """
    files = cassette_files([ROOT / "cassettes"])
    for path in files:  # warm: imports, SDK models, regexes
        replay_cassette(path)
    rates = []
    for _ in range(rounds):
        turns = 0
        with Stopwatch() as clock:
            for path in files:
                turns += len(replay_cassette(path).turns)
        rates.append(turns / clock.seconds)
    rate = statistics.median(rates)
    return Row(
        "5. replay",
        f"replay_cassette over {len(files)} cassettes, median of {rounds} rounds",
        f"{rate:.0f} exchanges/s ({turns} a round; rounds {min(rates):.0f}-{max(rates):.0f}/s)",
        ">= 500/s",
        rate >= 500,
    )
