"""A group of shards of a ``--workers N`` campaign, as a pytest item pytest-xdist can run anywhere.

Not a test of agentfuzz: ``agentfuzz.runs.workers`` runs this file with ``pytest -n K``. Item g runs
the shards of group g (from the spec), each in a thread: shard k runs the ordinary engine with
seed ``seed + k * 1000`` (or unseeded) into ``<out>/.shards/<k>/``, where it keeps
``progress.json`` (its latest ``Status``, at most twice a second) and, at the end, its
``summary.json``, or ``failed.json`` and ``error.log`` when it could not finish. SIGTERM stops the
shards of an item as Ctrl-C does.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import json
import os
import signal
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import pytest

from agentfuzz.errors import TargetUnreachable
from agentfuzz.model.files import write_atomically
from agentfuzz.output.findings.status import Status
from agentfuzz.runs.campaign import RunBroke, run_unfolded
from agentfuzz.runs.config import FuzzConfig, ShardSpec

# Seconds between two writes of a shard's progress file, for a process of up to BEACON_SHARDS
# shards; a process of more writes each less often (128 shards: every 8 s), so that the files
# stay a few writes a second per process.
BEACON_EVERY = 0.5
BEACON_SHARDS = 8


def _spec() -> ShardSpec:
    path = os.environ.get("AGENTFUZZ_SHARD_SPEC")
    if not path:
        pytest.skip("not run by agentfuzz --workers")
    return ShardSpec.model_validate_json(Path(path).read_bytes())


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "group" in metafunc.fixturenames:
        metafunc.parametrize("group", range(len(_spec().groups)))


class _Beacon:
    """Writes a shard's latest ``Status`` to its progress file, atomically and not too often."""

    def __init__(self, path: Path, every: float = BEACON_EVERY) -> None:
        self.path, self.last, self.every = path, 0.0, every
        self.latest = Status("done", 0)
        path.parent.mkdir(parents=True, exist_ok=True)

    def __call__(self, status: Status, force: bool = False) -> None:
        self.latest = status
        now = time.monotonic()
        if not force and now - self.last < self.every:
            return
        self.last = now
        data = dataclasses.asdict(status) | {"at": time.time()}
        write_atomically(self.path, json.dumps(data))


def _rotated(items: list[Any], by: int) -> tuple[Any, ...]:
    by %= len(items)
    return tuple(items[by:] + items[:by])


def _config(spec: ShardSpec, shard: int) -> FuzzConfig:
    config = spec.config
    # Each shard starts on another mode and kind, so that a run cut short by --max-time (or
    # Ctrl-C) has still covered every mode it could.
    return config.model_copy(
        update={
            "out": config.out / ".shards" / str(shard),
            "modes": _rotated(list(config.modes), shard),
            "kinds": _rotated(list(config.kinds), shard),
            "api_key": os.environ.get("OPENAI_API_KEY") or None,
            "headers": json.loads(os.environ.get("AGENTFUZZ_HEADERS") or "{}"),
            "seed": None if config.seed is None else config.seed + shard * 1000,
            # The openings are the same requests whatever the seed: the first shard sends them.
            "openings": config.openings and shard == 0,
            # Each shard asks its own questions: its own tapes.
            "cassette": None if config.cassette is None else config.cassette / f"shard-{shard}",
        }
    )


def _shard(spec: ShardSpec, shard: int, halt: threading.Event, beside: int = 1) -> None:
    """Run shard ``shard`` (one of ``beside`` in this process); whatever ends it, leave in its
    folder what the merge needs: its ``summary.json``, or ``failed.json`` saying why there is
    none (and ``error.log``)."""
    config = _config(spec, shard)
    every = BEACON_EVERY * max(1.0, beside / BEACON_SHARDS)
    beacon = _Beacon(config.out / "progress.json", every)
    try:
        report = run_unfolded(config, beacon, stop=halt.is_set)
    except RunBroke as broke:
        report = broke.report
    except BaseException as exc:
        unreachable = isinstance(exc, TargetUnreachable)
        why = str(exc) if unreachable else f"{type(exc).__name__}: {' '.join(str(exc).split())}"
        write_atomically(config.out / "error.log", traceback.format_exc())
        failed = {"why": why[:300], "unreachable": unreachable}
        write_atomically(config.out / "failed.json", json.dumps(failed))
        if not isinstance(exc, Exception):
            raise
        return
    # The last status the run gave may not have been written: write it, as done.
    beacon(dataclasses.replace(beacon.latest, phase="done"), force=True)
    if report.error:
        write_atomically(config.out / "error.log", report.traceback)
    write_atomically(config.out / "summary.json", report.summary().model_dump_json())


def _stop_on_sigterm() -> None:
    """SIGTERM (what CI timeouts send) stops the shards the way Ctrl-C does."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    with contextlib.suppress(ValueError):  # not the main thread: the process's own handler stays
        signal.signal(signal.SIGTERM, interrupt)


def test_shards(group: int) -> None:
    spec = _spec()
    halt = threading.Event()
    _stop_on_sigterm()
    # What is loaded by now (modules, schemas, strategies) lives as long as the process: out of
    # the collector's sight, a collection costs what the shards made since, not the whole heap.
    gc.freeze()
    threads = [
        threading.Thread(
            target=_shard,
            args=(spec, k, halt, len(spec.groups[group])),
            name=f"shard-{k}",
            daemon=True,
        )
        for k in spec.groups[group]
    ]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(0.2)
    except KeyboardInterrupt:
        # Each shard stops before its next request and writes what it found before this ends.
        halt.set()
        for thread in threads:
            thread.join()
        raise
