"""The typed contracts: the worker spec and the run summary, serialised by pydantic."""

from __future__ import annotations

from pathlib import Path

from agentfuzz import FuzzConfig, Summary, load_profile
from agentfuzz.model.summary import FailedShard
from agentfuzz.runs.config import ShardSpec
from agentfuzz.runs.workers import spec_of
from agentfuzz.wire.target import BackendLog

ONE_RUN = [
    "findings",
    "run",
    "examples",
    "requests",
    "elapsed_s",
    "examples_per_s",
    "session_turns",
    "stopped_answering",
    "interrupted",
    "out_of_time",
    "not_served",
    "error",
    "latency",
    "coverage",
    "shrink_steps",
    "reduce_steps",
    "max_failures_reached",
    "set_aside",
    "notes",
]


def test_the_spec_carries_no_key_and_no_live_object_and_reads_back(tmp_path: Path) -> None:
    config = FuzzConfig(
        base_url="http://127.0.0.1:9/v1",
        model="m",
        profile=load_profile("default"),
        out=tmp_path / "out",
        api_key="sk-very-secret",
        only=["empty_turn"],
        backend=BackendLog(),
        trials="auto",
    )
    text = spec_of(config, 3).model_dump_json()
    assert "sk-very-secret" not in text and "backend" not in text
    back = ShardSpec.model_validate_json(text)
    assert back.workers == 3 and back.config.api_key is None and back.config.backend is None
    assert back.config.out.is_absolute() and back.config.only == ("empty_turn",)
    assert back.config.model_copy(update={"api_key": "sk-very-secret"}) == config.model_copy(
        update={"backend": None, "out": config.out.resolve(), "database": back.config.database}
    )


def test_one_runs_summary_keeps_its_keys_and_a_merge_adds_the_shards() -> None:
    assert list(Summary().dump()) == ONE_RUN
    merged = Summary(shards=2, failed_shards=[FailedShard(shard=1, why="x")]).dump()
    assert list(merged) == [*ONE_RUN, "unreachable", "shards", "failed_shards"]
    assert merged["failed_shards"] == [{"shard": 1, "why": "x", "unreachable": False}]
    # A shard's own reason for failing is for the merge, never written.
    assert "failed" not in Summary(failed="killed").dump()
