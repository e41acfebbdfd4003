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
