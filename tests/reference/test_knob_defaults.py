"""A profile's knob_defaults go on every request that leaves a knob out, whoever built it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentfuzz.errors import ProfileError
from agentfuzz.model.history import Case, History, Options, UserMessage
from agentfuzz.reference import serve_in_thread
from agentfuzz.request.profiles import KnobDefaults, load_profile
from agentfuzz.wire.target import Target

DEFAULTS = KnobDefaults(seed=0, temperature=0.0, max_tokens=64)


def _sent(target: Target, case: Case) -> dict[str, object]:
    return dict(target.observe(case).exchange.request)


def test_unset_knobs_take_the_defaults_and_set_ones_stay() -> None:
    history = History(items=(UserMessage(text="hi"),))
    with serve_in_thread("fixed") as url:
        target = Target(url, "m", None, 10.0, knob_defaults=DEFAULTS)
        plain = Target(url, "m", None, 10.0)
        try:
            chat = _sent(target, Case(history=history, options=Options(max_tokens=16)))
            responses = _sent(target, Case(history=history, api="responses"))
            bare = _sent(plain, Case(history=history))
        finally:
            target.close()
            plain.close()
    assert (chat["seed"], chat["temperature"], chat["max_tokens"]) == (0, 0.0, 16)
    assert (responses["temperature"], responses["max_output_tokens"]) == (0.0, 64)
    assert not {"seed", "temperature", "max_tokens"} & set(bare)


def test_a_profile_file_sets_them_and_bad_values_are_one_line(tmp_path: Path) -> None:
    good = tmp_path / "slow.toml"
    good.write_text("knob_defaults = { temperature = 0.0, seed = 0, max_tokens = 256 }\n")
    assert load_profile(str(good)).knob_defaults == KnobDefaults(
        seed=0, temperature=0.0, max_tokens=256
    )
    bad = tmp_path / "bad.toml"
    bad.write_text("knob_defaults = { temperature = 3.0 }\n")
    with pytest.raises(ProfileError, match="knob_defaults") as caught:
        load_profile(str(bad))
    assert "\n" not in str(caught.value)
