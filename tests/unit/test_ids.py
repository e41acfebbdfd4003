"""Each ID family's strategy yields ids that its recognizer maps back to it, in catalog shape."""

from __future__ import annotations

import re
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfuzz.request.ids import (
    ADVERSARIAL,
    FAMILIES,
    REPEATING,
    SEEDS,
    TIES,
    entropy,
    format_id,
    is_kimi_native,
    recognize,
)
from agentfuzz.request.profiles import Profile
from agentfuzz.strategies import tool_names

ALNUM = re.compile(r"[A-Za-z0-9]+")
NAMES = tool_names(Profile())


def id_strategy(family: str, name: str, index: int) -> st.SearchStrategy[str]:
    """Ids of ``family`` for call ``index`` to tool ``name``, the way histories draw them: one
    ``SEEDS`` choice each (``KeyError`` for an unknown family, at once)."""
    format_id(family, name, index, entropy(0))
    return SEEDS.map(lambda seed: format_id(family, name, index, entropy(seed)))


@st.composite
def drawn_ids(draw: st.DrawFn, family: str) -> tuple[str, str, int]:
    name = draw(NAMES)
    index = draw(st.integers(0, 500))
    return draw(id_strategy(family, name, index)), name, index


def test_registry_is_ordered_and_disjoint() -> None:
    assert FAMILIES[0] == "openai_chat"
    assert not set(FAMILIES) & set(ADVERSARIAL)
    assert len(set(FAMILIES)) == len(FAMILIES)
    known = set(FAMILIES) | set(ADVERSARIAL)
    assert set(TIES) <= known
    assert all(targets <= known for targets in TIES.values())
    assert known >= REPEATING


@pytest.mark.parametrize("family", FAMILIES + ADVERSARIAL)
@settings(max_examples=60, database=None)
@given(data=st.data())
def test_recognize_round_trips_every_family(family: str, data: st.DataObject) -> None:
    drawn, _, _ = data.draw(drawn_ids(family))
    assert recognize(drawn) in {family} | TIES.get(family, frozenset()), drawn


def test_unknown_family_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        id_strategy("nope", "get_weather", 0)


SHAPES: dict[str, re.Pattern[str]] = {
    "openai_chat": re.compile(r"call_[A-Za-z0-9]{24}"),
    "vllm_chat": re.compile(r"chatcmpl-tool-[0-9a-f]{32}"),
    "vllm_responses": re.compile(r"(call|fc)_[0-9a-f]{32}"),
    "vllm_responses_stream": re.compile(r"call_[0-9a-f]{16}"),
    "sglang": re.compile(r"call_[A-Za-z0-9_-]{22}"),
    "llamacpp": re.compile(r"[A-Za-z0-9]{32}"),
    "ollama": re.compile(r"call_[a-z0-9]{8}"),
    "mistral": re.compile(r"[A-Za-z0-9]{9}"),
    "anthropic": re.compile(r"toolu_01[A-Za-z0-9]{22}"),
    "bedrock": re.compile(r"tooluse_[A-Za-z0-9_-]{22}"),
    "kimi_callnum": re.compile(r"call\d{5}"),
    "gemini_thought": re.compile(r"call_[A-Za-z0-9]+__thought__[A-Za-z0-9+/]+=*"),
    "lmstudio": re.compile(r"0|[1-9]\d{8,9}"),
}


@pytest.mark.parametrize("family", sorted(SHAPES))
@settings(max_examples=40, database=None)
@given(data=st.data())
def test_catalog_shapes(family: str, data: st.DataObject) -> None:
    drawn, _, _ = data.draw(drawn_ids(family))
    assert SHAPES[family].fullmatch(drawn), drawn


@settings(max_examples=100, database=None)
@given(data=st.data())
def test_lengths_and_index_dependent_shapes(data: st.DataObject) -> None:
    name = data.draw(NAMES)
    index = data.draw(st.integers(0, 500))

    def one(family: str) -> str:
        return data.draw(id_strategy(family, name, index))

    assert len(one("openai_chat")) <= 40
    responses = one("openai_responses")
    assert len(responses) <= 64 and responses.startswith("call_")
    assert ALNUM.fullmatch(responses.removeprefix("call_"))
    assert one("kimi_native") == f"functions.{name}:{index}"
    assert one("kimi_bare") == f"{name}:{index}"
    assert re.fullmatch(r"functions_[A-Za-z0-9_-]+_\d+", one("kimi_sanitized"))
    assert re.fullmatch(r"functions[A-Za-z0-9]*\d+", one("kimi_squashed"))
    assert one("kimi_callnum") == f"call{index:05d}"
    assert one("sglang_old") == str(index)
    assert one("llamacpp_old") == one("gemini_none") == one("empty") == ""
    assert one("agents_sdk") == "__fake_id__"
    deepseek = one("deepseek")
    assert deepseek.startswith("call_0_")
    assert uuid.UUID(deepseek.removeprefix("call_0_")).version == 4
    assert 41 <= len(one("over_40")) <= 64
    assert 65 <= len(one("over_64")) <= 200
    assert one("whitespace").isspace()
    assert not one("unicode").isascii()
    assert not one("mistral").isdigit()


@settings(max_examples=200, database=None)
@given(data=st.data())
def test_near_native_is_never_kimi_native(data: st.DataObject) -> None:
    drawn, _, _ = data.draw(drawn_ids("near_native"))
    assert not is_kimi_native(drawn)
    assert recognize(drawn) == "near_native"


@pytest.mark.parametrize(
    ("value", "family"),
    [
        ("functions.get_weather:3", "kimi_native"),
        ("functions.mcp__my-server__search:12", "kimi_native"),
        ("call_abc123:0", "near_native"),
        ("call_x:0", "near_native"),
        ("functions.x", "near_native"),
        ("functions_get_weather_0", "kimi_sanitized"),
        ("Bash:0", "kimi_bare"),
        ("functionsexec5", "kimi_squashed"),
        ("call00003", "kimi_callnum"),
        ("0", "sglang_old"),
        ("", "llamacpp_old"),
        (" \t", "whitespace"),
        ("__fake_id__", "agents_sdk"),
        ("call_0_3f0e8a5c-1b2d-4c3e-9f4a-5b6c7d8e9f01", "deepseek"),
        ("x" * 50, "over_40"),
        ("hello world", None),
    ],
)
def test_known_examples(value: str, family: str | None) -> None:
    assert recognize(value) == family
    assert is_kimi_native(value) == (family == "kimi_native")
