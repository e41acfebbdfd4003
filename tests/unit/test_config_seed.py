"""Issue 41, item 1: the seed is drawn as the configuration is built, so everything downstream
(the summary, every bundle, the console, each --workers shard) records the one that repeats the
run; a campaign through cassettes keeps 0, the seed its tapes were recorded under."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentfuzz.request.profiles import load_profile
from agentfuzz.runs.config import FuzzConfig, found_by


def test_a_config_built_without_a_seed_draws_one_and_a_cassette_campaign_keeps_0() -> None:
    fields: dict[str, Any] = {"base_url": "http://h/v1", "model": "m", "out": Path("o")}
    fields["profile"] = load_profile("default")
    drawn = FuzzConfig(**fields)
    assert isinstance(drawn.seed, int)
    assert FuzzConfig(**fields, seed=7).seed == 7
    assert FuzzConfig(**fields, cassette=Path("c")).seed == 0
    # A shard reads the configuration back with its seed, not a new one.
    assert FuzzConfig.model_validate_json(drawn.model_dump_json()).seed == drawn.seed
    assert found_by(drawn)["seed"] == drawn.seed


def test_only_a_drawn_seed_keeps_the_example_database(monkeypatch: Any) -> None:
    # A drawn seed pins the draws but leaves saved failures to replay first; --seed N (and a
    # cassette campaign's 0) turn the database off, so the draws repeat exactly.
    import hypothesis.core

    monkeypatch.setattr(hypothesis.core, "global_force_seed", None)
    fields: dict[str, Any] = {"base_url": "http://h/v1", "model": "m", "out": Path("o")}
    fields["profile"] = load_profile("default")
    assert FuzzConfig(**fields).seed_drawn
    assert not FuzzConfig(**fields, seed=7).seed_drawn
    assert not FuzzConfig(**fields, cassette=Path("c")).seed_drawn
    # pytest --hypothesis-seed pins the whole process: that pin is the run's seed.
    monkeypatch.setattr(hypothesis.core, "global_force_seed", 6)
    assert FuzzConfig(**fields).seed == 6
