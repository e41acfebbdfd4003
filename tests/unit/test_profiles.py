"""Profiles load from TOML, and every way a profile can be wrong is one readable line."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest

from agentfuzz.errors import ProfileError
from agentfuzz.request import profiles
from agentfuzz.request.ids import ADVERSARIAL, FAMILIES
from agentfuzz.request.profiles import Profile, list_profiles, load_profile


def test_shipped_profiles_are_listed() -> None:
    names = list_profiles()
    assert {"default", "kimi-k2"} <= set(names)
    assert names == sorted(names)


def test_default_toml_matches_the_model_defaults() -> None:
    loaded = load_profile("default")
    assert loaded.model_copy(update={"description": ""}) == Profile()
    assert loaded.id_families == FAMILIES
    assert loaded.adversarial == ADVERSARIAL


def test_kimi_profile_weights_kimi_native_first() -> None:
    kimi = load_profile("kimi-k2")
    assert kimi.name == "kimi-k2"
    assert kimi.weighted_families[0] == "kimi_native"
    assert kimi.weighted_families.count("kimi_native") > kimi.weighted_families.count("openai_chat")
    assert kimi.reasoning and kimi.namespaced_tools and kimi.namespace_tools
    assert "near_native" in kimi.adversarial


def test_profile_is_frozen() -> None:
    with pytest.raises(pydantic.ValidationError):
        Profile().max_turns = 3  # type: ignore[misc]


def test_adversarial_false_turns_them_all_off() -> None:
    assert Profile(adversarial_ids=False).adversarial == ()
    assert Profile(adversarial_ids=["empty"]).adversarial == ("empty",)


def write(tmp_path: Path, text: str, name: str = "p.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_path_profile_takes_its_stem_as_name(tmp_path: Path) -> None:
    path = write(tmp_path, "max_turns = 2\nid_families = ['kimi_native']\n", "short.toml")
    loaded = load_profile(str(path))
    assert loaded.name == "short"
    assert loaded.max_turns == 2
    assert loaded.weighted_families == ("kimi_native",)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("max_turns = 0", "max_turns: Input should be greater than 0"),
        ("colour = 'red'", "colour: Extra inputs are not permitted"),
        ("id_families = ['openai_chat', 'nope']", "id_families: unknown id family 'nope'"),
        ("id_families = []", "id_families: needs at least one family"),
        ("adversarial_ids = ['openai_chat']", "adversarial_ids"),
        (
            "id_weights = { vllm_chat = 2 }\nid_families = ['openai_chat']",
            "id_weights: 'vllm_chat'",
        ),
        ("id_weights = { openai_chat = 0 }", "id_weights: 'openai_chat' needs a weight"),
        ("tool_choices = ['sometimes']", "tool_choices.0: Input should be"),
        ("temperatures = [3.0]", "temperatures: temperatures must lie in [0, 2]"),
        ("max_tokens = [0]", "max_tokens: max_tokens must lie in [1, "),
        ("max_tokens = [1e12]", "max_tokens"),
        ("context_chars = 1e12", "context_chars: Input should be less than or equal to"),
        ("max_text_size = 1e12", "max_text_size: Input should be less than or equal to"),
        ("max_turns = 100000000", "max_turns: Input should be less than or equal to"),
        ("session_turns = 100000000", "session_turns: Input should be less than or equal to"),
        ("max_tools = 100000000", "max_tools: Input should be less than or equal to"),
        ("max_parallel_calls = 100000000", "max_parallel_calls: Input should be less than"),
        ("id_weights = { openai_chat = 1000000000 }", "id_weights: 'openai_chat' needs a weight"),
        ("knob_defaults = { max_tokens = 1e12 }", "knob_defaults.max_tokens: Input should be"),
        ("max_turns = ", "invalid TOML: "),
    ],
)
def test_errors_are_one_line_naming_file_and_field(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = write(tmp_path, text + "\n", "bad.toml")
    with pytest.raises(ProfileError) as caught:
        load_profile(str(path))
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert expected in message
    assert "\n" not in message


def test_unknown_name_lists_known_profiles() -> None:
    with pytest.raises(ProfileError) as caught:
        load_profile("no-such-profile")
    assert str(caught.value).startswith("strategies/no-such-profile.toml: no such profile")
    assert "default" in str(caught.value)


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="cannot read"):
        load_profile(str(tmp_path / "absent.toml"))
    (tmp_path / "dir.toml").mkdir()
    with pytest.raises(ProfileError, match="cannot read"):
        load_profile(str(tmp_path / "dir.toml"))
    (tmp_path / "latin.toml").write_bytes(b"name = '\xff'\n")
    with pytest.raises(ProfileError, match="not UTF-8"):
        load_profile(str(tmp_path / "latin.toml"))


def test_path_inside_cwd_is_shown_relative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "max_turns = 0\n", "bad.toml")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ProfileError, match=r"^bad\.toml: max_turns: "):
        load_profile(str(tmp_path / "bad.toml"))


def test_wheel_location_is_used_without_a_project_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "max_tools = 1\n", "wheeled.toml")
    monkeypatch.setattr(profiles, "_PROJECT_DIR", tmp_path / "absent")
    monkeypatch.setattr(profiles, "_WHEEL_DIR", tmp_path)
    assert list_profiles() == ["wheeled"]
    assert load_profile("wheeled").max_tools == 1


def test_a_huge_context_is_exit_2_naming_file_and_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Issue 41 item 22: ``context_chars = 1e12`` was a MemoryError mid-run."""
    from agentfuzz.cli import main

    bad = write(tmp_path, "context_chars = 1e12\n", "huge.toml")
    code = main(["fuzz", "--base-url", "http://127.0.0.1:9/v1", "--profile", str(bad)])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "huge.toml" in err and "context_chars" in err
