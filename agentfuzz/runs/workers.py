"""``--workers N``: a campaign split into N shards run in parallel by pytest-xdist, then merged.

Each shard runs the ordinary engine with its own seed and its own output folder, all sharing one
Hypothesis example database. A pytest item (``runs/_shard.py``) runs a group of shards, one
thread each, with about one item per core: shards mostly wait on the server, and a shard sharing
a process does not pay for an interpreter's start-up of its own. Parallelism comes
from pytest-xdist (``-n N``; extra xdist arguments such as ``--tx``/``--dist`` for several hosts
pass through ``AGENTFUZZ_XDIST_ARGS``), not from a scheduler of ours. When the shards are done,
``merge`` keeps, for every distinct failure, the smallest repro any shard found, copies that one
bundle into ``--out`` and sums what the shards counted into one summary.

Why this knob matters for a GPU server: the server batches the requests it has in flight, so one
client sending one request at a time leaves most of the batch empty. N shards keep N requests in
flight; raise N until the server's throughput stops growing.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentfuzz.model.files import write_atomically
from agentfuzz.model.summary import Coverage, FailedShard, FindingRow, Latency, Summary, TurnRow
from agentfuzz.oracles import suspect
from agentfuzz.output.findings.bundle import claimed_dir
from agentfuzz.output.findings.status import Status
from agentfuzz.runs.config import FuzzConfig, ShardSpec
from agentfuzz.runs.engine import Progress

__all__ = [
    "SHARD_HEADERS",
    "SHARD_SPEC",
    "groups",
    "merge",
    "merged_status",
    "run_sharded",
    "spec_of",
]

# The environment variable a shard reads its campaign from.
SHARD_SPEC = "AGENTFUZZ_SHARD_SPEC"
# The ``--header`` headers, as a JSON object: secrets, so beside the key, not in the spec file.
SHARD_HEADERS = "AGENTFUZZ_HEADERS"
_SHARD_TEST = Path(__file__).with_name("_shard.py")


def spec_of(config: FuzzConfig, workers: int) -> ShardSpec:
    """The campaign as shards in other processes (or on other hosts) read it: every path
    absolute, no API key (it travels in the environment)."""

    def absolute(path: Path | None) -> Path | None:
        return None if path is None else path.resolve()

    # Cassettes are named by a digest of what was sent: shards that send the same requests
    # write the same name, and the last write wins whole (save_cassette replaces at once).
    paths = {"out": config.out.resolve(), "database": absolute(config.database)}
    paths["record"] = absolute(config.record)
    paths["cassette"] = absolute(config.cassette)
    shared = config.model_copy(update=paths)
    return ShardSpec(config=shared, workers=workers, groups=groups(workers, os.cpu_count() or 1))


def groups(workers: int, cores: int) -> list[list[int]]:
    """Shard numbers per pytest item: about one item per core, its shards run as threads.

    A shard spends most of its time waiting for the server, so on a machine with fewer cores
    than shards, several shards share one process (and one start-up) instead of each paying for
    its own interpreter.
    """
    per_item = -(-workers // max(1, min(cores, workers)))
    return [list(range(k, min(k + per_item, workers))) for k in range(0, workers, per_item)]


def run_sharded(config: FuzzConfig, workers: int, progress: Progress = lambda _: None) -> Summary:
    """Run ``workers`` shards through pytest-xdist and return the merged summary.

    The API key and the headers travel in the environment (``OPENAI_API_KEY``,
    ``AGENTFUZZ_HEADERS``), never in the spec file. While
    the shards run, ``progress`` gets their ``Status`` merged, from the files they write. However
    a shard ends (done, stopped, crashed, killed), the bundles it wrote are merged with the
    others', and a shard that did not finish is named, with why, in ``failed_shards``.
    """
    started = time.monotonic()
    shards = config.out / ".shards"
    shutil.rmtree(shards, ignore_errors=True)
    shards.mkdir(parents=True)
    spec = spec_of(config, workers)
    extra = shlex.split(os.environ.get("AGENTFUZZ_XDIST_ARGS", ""))
    spec_path = shards / "spec.json"
    write_atomically(spec_path, spec.model_dump_json())
    env = dict(os.environ, **{SHARD_SPEC: str(spec_path)})
    if config.api_key:
        env["OPENAI_API_KEY"] = config.api_key
    if config.headers:
        env[SHARD_HEADERS] = json.dumps(config.headers)
    argv = [sys.executable, "-m", "pytest", str(_SHARD_TEST), "-q", "-p", "no:cacheprovider"]
    argv += ["-p", "no:randomly", "--rootdir", str(shards), "-c", os.devnull]
    argv += ["-n", str(len(spec.groups)), *extra]
    log = shards / "pytest.log"
    interrupted = _watch(argv, env, log, shards, progress)
    summaries = [
        # Stopped while pytest-xdist was still bringing its nodes up: a shard that never
        # began failed at nothing, and found nothing.
        Summary(interrupted=True)
        if interrupted and not (shards / str(k)).exists()
        else _shard_summary(shards, k, log)
        for k in range(workers)
    ]
    merged = merge(summaries, config.out)
    if not merged.failed_shards:
        # The merged bundles are copies: the shards' own would only be duplicates to trip over.
        shutil.rmtree(shards, ignore_errors=True)
    elapsed = round(time.monotonic() - started, 3)
    total = sum(merged.examples.values())
    return merged.model_copy(
        update={
            "interrupted": merged.interrupted or interrupted,
            "elapsed_s": elapsed,
            "examples_per_s": round(total / elapsed, 1) if elapsed else None,
        }
    )


def _shard_summary(shards: Path, shard: int, log: Path) -> Summary:
    """Shard ``shard``'s summary; for a shard that ended without one, what its folder holds."""
    folder = shards / str(shard)
    try:
        summary = Summary.model_validate_json((folder / "summary.json").read_bytes())
    except (OSError, ValueError):
        salvaged = _salvaged(folder, log)
        try:
            failed = json.loads((folder / "failed.json").read_text("utf-8"))
        except (OSError, ValueError):
            return salvaged
        why = f"{failed['why']} (traceback in {folder / 'error.log'})"
        unreachable = failed["why"] if failed.get("unreachable") else None
        return salvaged.model_copy(update={"failed": why, "unreachable": unreachable})
    if summary.error:
        where = folder / "error.log"
        summary.failed = f"{summary.error} (traceback in {where})"
    return summary


def _salvaged(folder: Path, log: Path) -> Summary:
    """What a shard that died (killed, or crashed past its own report) left on disk: its
    bundles, each written the moment it was found, and its last progress."""
    findings = []
    for path in sorted(folder.glob("*/repro.json")):
        try:
            doc = json.loads(path.read_text("utf-8"))
            done, _, tries = str(doc.get("reproduced", "")).partition("/")
            flaky = done.isdigit() and tries.isdigit() and 0 < int(done) < int(tries)
            fields = ("oracle", "signature", "message", "size", "reproduced")
            row = {k: doc.get(k) for k in fields} | {"flaky": flaky, "bundle": str(path.parent)}
            findings.append(FindingRow.model_validate(row))
        except (OSError, ValueError):  # cut mid-write before the atomic replace: not a bundle
            continue
    examples = 0
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        examples = int(json.loads((folder / "progress.json").read_text("utf-8"))["examples"])
    # Only what the disk still says.
    return Summary(
        findings=findings,
        failed=f"ended without its summary after {examples} examples, its counts lost "
        f"(killed, or crashed: see {log})",
    )


def _watch(
    argv: list[str], env: dict[str, str], log: Path, shards: Path, progress: Progress
) -> bool:
    """Run the shards' pytest, feeding ``progress`` until it ends; True if interrupted.

    The shards run in a process group of their own, so a Ctrl-C or a SIGTERM reaches them once,
    from here: each stops before its next request and writes what it found, and this waits for
    them (up to ``STOP_WAIT`` seconds) so that nothing found is lost. A second one stops them at
    once; what they wrote is merged all the same. While it watches, this process takes both
    signals as a count, never as an exception: one raised inside ``Popen.wait`` can leave the
    child's wait lock held, and the next wait then blocks for ever.
    """
    with log.open("w") as sink, _counted_signals() as signals:
        child = subprocess.Popen(
            argv, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            return _wait(child, shards, progress, signals)
        finally:
            # Shards deaf to the stop, or a second signal: none may outlive this command (in a
            # session of their own, no terminal would reach them).
            if child.poll() is None:
                _signal_group(child, signal.SIGKILL)
                child.wait()


# Seconds the shards get to write what they found once told to stop.
STOP_WAIT = 60.0


def _wait(
    child: subprocess.Popen[bytes], shards: Path, progress: Progress, signals: list[int]
) -> bool:
    told: float | None = None
    while child.poll() is None:
        if signals[0] and told is None:
            _signal_group(child, signal.SIGINT)
            told = time.monotonic()
        if told is not None and (signals[0] > 1 or time.monotonic() - told > STOP_WAIT):
            break
        status = merged_status(shards)
        if status is not None:
            progress(status)
        time.sleep(0.25)
    # The shards' last words (their "done" status), whatever the polling saw before.
    status = merged_status(shards)
    if status is not None:
        progress(status)
    return told is not None


@contextlib.contextmanager
def _counted_signals() -> Iterator[list[int]]:
    """SIGINT and SIGTERM counted in ``[n]`` while inside (in the main thread only; another
    thread never receives them)."""
    count = [0]

    def counted(signum: int, frame: object) -> None:
        count[0] += 1

    before: dict[signal.Signals, Any] = {}
    with contextlib.suppress(ValueError):  # not the main thread
        for which in (signal.SIGINT, signal.SIGTERM):
            before[which] = signal.signal(which, counted)
    try:
        yield count
    finally:
        for which, handler in before.items():
            signal.signal(which, handler)


def _signal_group(child: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signum)


def merged_status(shards: Path) -> Status | None:
    """The shards' progress files as one ``Status``: examples summed, failures united."""
    reads = []
    for path in shards.glob("*/progress.json"):
        try:
            reads.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):  # being replaced at this very moment: next time
            continue
    if not reads:
        return None
    failures = sorted({(f[0], f[1]) for r in reads for f in r["failures"]})
    latest = max((r for r in reads if r["shrinking"]), key=lambda r: r["at"], default=None)
    shrinking = None if latest is None else (latest["shrinking"][0], latest["shrinking"][1])
    phases = sorted({r["phase"] for r in reads})
    stages = sorted({r.get("stage", "") for r in reads} - {""})
    return Status(
        f"{len(reads)} shards: {', '.join(phases)}",
        sum(int(r["examples"]) for r in reads),
        tuple(failures),
        shrinking,
        ", ".join(stages),
    )


def _rank(finding: FindingRow) -> tuple[int, int, str]:
    # Smallest history first; then the shorter request; then the folder, for a stable choice.
    request = json.loads((Path(finding.bundle) / "repro.json").read_text())["request"]
    return (finding.size, len(json.dumps(request)), finding.bundle)


def merge(summaries: list[Summary], out: Path) -> Summary:
    """One summary from the shards' summaries; each distinct failure's smallest bundle is copied
    to ``out`` (its folder name is the failure's, so no failure gets two bundles). After a
    crash, every shard's suspect is kept: the others as ``<folder>-shard<k>``."""
    run = next((s.run for s in summaries if s.run), {})
    examples: Counter[str] = Counter()
    shrinks: Counter[str] = Counter()
    turns: dict[str, TurnRow] = {}
    samples: dict[str, list[float]] = {}
    timeouts: Counter[str] = Counter()
    coverage: dict[str, Coverage] = {}
    for summary in summaries:
        examples.update(summary.examples)
        shrinks.update(summary.shrink_steps)
        for dimension, used in summary.coverage.items():
            coverage.setdefault(dimension, Coverage()).add(used)
        for mode, seconds in summary.samples.items():
            samples.setdefault(mode, []).extend(seconds)
        timeouts.update({m: row.timeouts for m, row in summary.latency.items()})
        for number, row in summary.session_turns.items():
            slot = turns.setdefault(number, TurnRow())
            slot.reached += row.reached
            slot.failed += row.failed
    return Summary(
        findings=_merged_findings(summaries, out, run),
        run=run,
        examples=dict(examples),
        shrink_steps=dict(shrinks),
        reduce_steps=sum(s.reduce_steps for s in summaries),
        requests=sum(s.requests for s in summaries),
        elapsed_s=max((s.elapsed_s for s in summaries), default=0.0),
        session_turns=dict(sorted(turns.items(), key=lambda kv: int(kv[0]))),
        latency={m: Latency.of(s, timeouts[m]) for m, s in samples.items()},
        samples=samples,
        coverage=coverage,
        stopped_answering=any(s.stopped_answering for s in summaries),
        interrupted=any(s.interrupted for s in summaries),
        out_of_time=any(s.out_of_time for s in summaries),
        max_failures_reached=any(s.max_failures_reached for s in summaries),
        not_served=next((s.not_served for s in summaries if s.not_served), None),
        notes=list(dict.fromkeys(note for s in summaries for note in s.notes)),
        error=next((s.error for s in summaries if s.error), None),
        unreachable=next((s.unreachable for s in summaries if s.unreachable), None),
        shards=len(summaries),
        failed_shards=[
            FailedShard(shard=k, why=s.failed, unreachable=bool(s.unreachable))
            for k, s in enumerate(summaries)
            if s.failed
        ],
    )


def _merged_findings(summaries: list[Summary], out: Path, run: dict[str, Any]) -> list[FindingRow]:
    """Each distinct failure's smallest bundle, copied to ``out``; after a crash, every shard's
    suspect too."""
    crashed = any(s.stopped_answering for s in summaries)
    by_name: dict[str, list[FindingRow]] = {}
    for summary in summaries:
        for finding in summary.findings:
            by_name.setdefault(Path(finding.bundle).name, []).append(finding)
    best: dict[str, FindingRow] = {}
    for name, rows in by_name.items():
        smallest, *others = sorted(rows, key=_rank)
        best[name] = smallest
        # Each shard's request in flight may have killed the server: all are suspects.
        if crashed and suspect(smallest.oracle, smallest.signature):
            for other in others:  # a shard's bundle is <out>/.shards/<k>/<folder>
                best[f"{name}-shard{Path(other.bundle).parent.name}"] = other
    run_id = run.get("run") if isinstance(run.get("run"), str) else None
    findings = []
    for name, finding in sorted(best.items()):
        # Never over another run's bundle of the same failure: that one is numbered on.
        target = claimed_dir(out, name, run_id)
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(finding.bundle, target)
        seen = sorted({m for row in by_name.get(name, [finding]) for m in row.seen_on})
        findings.append(finding.model_copy(update={"bundle": str(target), "seen_on": seen}))
    return findings
