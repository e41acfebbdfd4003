"""``--workers N``: a campaign split into N shards run in parallel by pytest-xdist, then merged.

Each shard runs the ordinary engine with its own seed and its own output folder, all sharing one
Hypothesis example database. A pytest item (``agentfuzz/_shard.py``) runs a group of shards, one
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

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from agentfuzz.engine import FuzzConfig, Progress
from agentfuzz.findings import Status

__all__ = ["SHARD_SPEC", "groups", "merge", "merged_status", "run_sharded", "spec_of"]

# The environment variable a shard reads its campaign from.
SHARD_SPEC = "AGENTFUZZ_SHARD_SPEC"
_SHARD_TEST = Path(__file__).with_name("_shard.py")


def spec_of(config: FuzzConfig, workers: int) -> dict[str, Any]:
    """The campaign as JSON, for shards in other processes (or on other hosts)."""
    return {
        "workers": workers,
        "base_url": config.base_url,
        "model": config.model,
        "profile": config.profile.model_dump(mode="json"),
        "modes": [list(m) for m in config.modes],
        "kinds": list(config.kinds),
        "max_examples": config.max_examples,
        "seed": config.seed,
        "trials": config.trials,
        "only": None if config.only is None else list(config.only),
        "skip": list(config.skip),
        "timeout": config.timeout,
        "max_time": config.max_time,
        "database": None if config.database is None else str(config.database.resolve()),
        "out": str(config.out.resolve()),
        # Cassettes are named by a digest of what was sent: shards that send the same requests
        # write the same name, and the last write wins whole (save_cassette replaces at once).
        "record": None if config.record is None else str(config.record.resolve()),
    }


def groups(workers: int, cores: int) -> list[list[int]]:
    """Shard numbers per pytest item: about one item per core, its shards run as threads.

    A shard spends most of its time waiting for the server, so on a machine with fewer cores
    than shards, several shards share one process (and one start-up) instead of each paying for
    its own interpreter.
    """
    per_item = -(-workers // max(1, min(cores, workers)))
    return [list(range(k, min(k + per_item, workers))) for k in range(0, workers, per_item)]


def run_sharded(
    config: FuzzConfig, workers: int, progress: Progress = lambda _: None
) -> dict[str, Any]:
    """Run ``workers`` shards through pytest-xdist and return the merged summary.

    The API key travels in the environment (``OPENAI_API_KEY``), never in the spec file. While
    the shards run, ``progress`` gets their ``Status`` merged, from the files they write.
    """
    started = time.monotonic()
    shards = config.out / ".shards"
    shutil.rmtree(shards, ignore_errors=True)
    shards.mkdir(parents=True)
    spec = spec_of(config, workers)
    extra = shlex.split(os.environ.get("AGENTFUZZ_XDIST_ARGS", ""))
    spec["groups"] = groups(workers, os.cpu_count() or 1)
    spec_path = shards / "spec.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    env = dict(os.environ, **{SHARD_SPEC: str(spec_path)})
    if config.api_key:
        env["OPENAI_API_KEY"] = config.api_key
    argv = [sys.executable, "-m", "pytest", str(_SHARD_TEST), "-q", "-p", "no:cacheprovider"]
    argv += ["-p", "no:randomly", "--rootdir", str(shards), "-c", os.devnull]
    argv += ["-n", str(len(spec["groups"])), *extra]
    log = shards / "pytest.log"
    interrupted = _watch(argv, env, log, shards, progress)
    summaries = sorted(shards.glob("*/summary.json"))
    if len(summaries) != workers and not (interrupted and summaries):
        tail = " ".join(log.read_text(errors="replace").split()[-30:])
        raise RuntimeError(f"{workers - len(summaries)} shard(s) did not finish: {tail}")
    merged = merge([json.loads(p.read_text()) for p in summaries], config.out)
    merged["interrupted"] = merged["interrupted"] or interrupted
    if len(summaries) == workers:
        # The merged bundles are copies: the shards' own would only be duplicates to trip over.
        shutil.rmtree(shards, ignore_errors=True)
    merged["elapsed_s"] = round(time.monotonic() - started, 3)
    total = sum(merged["examples"].values())
    merged["examples_per_s"] = (
        round(total / merged["elapsed_s"], 1) if merged["elapsed_s"] else None
    )
    return merged


def _watch(
    argv: list[str], env: dict[str, str], log: Path, shards: Path, progress: Progress
) -> bool:
    """Run the shards' pytest, feeding ``progress`` until it ends; True if interrupted.

    On Ctrl-C the shards (in the same process group) stop too and write what they found; this
    waits for them so that nothing found is lost.
    """
    with log.open("w") as sink:
        child = subprocess.Popen(argv, env=env, stdout=sink, stderr=subprocess.STDOUT)
        try:
            while True:
                try:
                    child.wait(timeout=0.25)
                    break
                except subprocess.TimeoutExpired:
                    status = merged_status(shards)
                    if status is not None:
                        progress(status)
        except KeyboardInterrupt:
            try:
                child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            return True
    # The shards' last words (their "done" status), whatever the polling saw before.
    status = merged_status(shards)
    if status is not None:
        progress(status)
    return False


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
    return Status(
        f"{len(reads)} shards: {', '.join(phases)}",
        sum(int(r["examples"]) for r in reads),
        tuple(failures),
        shrinking,
    )


def _rank(finding: dict[str, Any]) -> tuple[int, int, str]:
    # Smallest history first; then the shorter request; then the folder, for a stable choice.
    request = json.loads((Path(finding["bundle"]) / "repro.json").read_text())["request"]
    return (finding["size"], len(json.dumps(request)), finding["bundle"])


def merge(summaries: list[dict[str, Any]], out: Path) -> dict[str, Any]:
    """One summary from the shards' summaries; each distinct failure's smallest bundle is copied
    to ``out`` (its folder name is the failure's, so no failure gets two bundles)."""
    best: dict[str, dict[str, Any]] = {}
    for summary in summaries:
        for finding in summary["findings"]:
            name = Path(finding["bundle"]).name
            if name not in best or _rank(finding) < _rank(best[name]):
                best[name] = finding
    findings = []
    for name, finding in sorted(best.items()):
        target = out / name
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(finding["bundle"], target)
        findings.append(finding | {"bundle": str(target)})
    examples: dict[str, int] = {}
    turns: dict[str, dict[str, int]] = {}
    for summary in summaries:
        for mode, n in summary["examples"].items():
            examples[mode] = examples.get(mode, 0) + n
        for number, row in summary["session_turns"].items():
            slot = turns.setdefault(number, {"reached": 0, "failed": 0})
            slot["reached"] += row["reached"]
            slot["failed"] += row["failed"]
    return {
        "findings": findings,
        "examples": examples,
        "requests": sum(s["requests"] for s in summaries),
        "elapsed_s": max((s["elapsed_s"] for s in summaries), default=0.0),
        "examples_per_s": None,
        "session_turns": dict(sorted(turns.items(), key=lambda kv: int(kv[0]))),
        "stopped_answering": any(s["stopped_answering"] for s in summaries),
        "interrupted": any(s["interrupted"] for s in summaries),
        "out_of_time": any(s.get("out_of_time", False) for s in summaries),
        "not_served": next((s["not_served"] for s in summaries if s["not_served"]), None),
        "shards": len(summaries),
    }
