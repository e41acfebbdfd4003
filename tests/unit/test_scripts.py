"""Puppet scripts as a Hypothesis strategy: every drawn script is one its format writes, the
plainest is one bare call, every dimension is reached, and the tools declared for a script type
its arguments."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from agentfuzz.puppet.formats import FORMATS, Call, Format, Json, Place, Script, Unwritable
from agentfuzz.puppet.formats._values import strings
from agentfuzz.strategies._scripts import MAX_CALLS, json_type, scripts, tools_for

NAMES = ("get_weather", "get_time", "search")
PLAINEST = Script((Call("get_weather"),))

CHECK = settings(database=None, derandomize=True, max_examples=25, deadline=None)
# Reachability needs only the first hit within a pinned budget, so no shrinking.
FIND = settings(
    database=None,
    derandomize=True,
    max_examples=2000,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
)
SHRINK = settings(
    database=None,
    derandomize=True,
    phases=[Phase.generate, Phase.shrink],
    suppress_health_check=list(HealthCheck),
)


def _found(fmt: Format, holds: Callable[[Script], bool], **kwargs: Any) -> Script:
    return find(scripts(fmt, NAMES, **kwargs), holds, settings=FIND)


def _texts(script: Script) -> list[str]:
    return [text for call in script.calls for text in strings(call.arguments)]


@pytest.mark.parametrize("name", sorted(FORMATS))
@CHECK
@given(data=st.data())
def test_every_drawn_script_is_one_its_format_writes(name: str, data: st.DataObject) -> None:
    fmt = FORMATS[name]
    script = data.draw(scripts(fmt, NAMES))
    assert fmt.unwritable(script) is None
    assert fmt.write(script)
    truth = fmt.expected(script)
    assert [(c.name, c.arguments) for c in truth.calls] == [
        (c.name, c.arguments) for c in script.calls
    ]
    assert {c.name for c in script.calls} <= set(NAMES)
    assert len(script.calls) <= (MAX_CALLS if fmt.parallel else 1)
    places = {Place.BEFORE: script.text_before, Place.AFTER: script.text_after}
    places[Place.BETWEEN] = script.text_between
    assert all(place in fmt.text for place, text in places.items() if text)
    if not fmt.carries_ids:
        assert all(call.id is None for call in script.calls)


@pytest.mark.parametrize("name", ["hermes", "qwen3_xml", "kimi_k2", "pythonic", "step3"])
def test_a_script_shrinks_to_one_bare_call_of_the_first_name(name: str) -> None:
    fmt = FORMATS[name]
    assert find(scripts(fmt, NAMES), lambda s: True, settings=SHRINK) == PLAINEST
    with_one = find(scripts(fmt, NAMES), lambda s: bool(s.calls[0].arguments), settings=SHRINK)
    assert with_one == Script((Call("get_weather", {"city": ""}),))


def test_prose_two_calls_and_carried_ids_are_reached() -> None:
    hermes, kimi = FORMATS["hermes"], FORMATS["kimi_k2"]
    assert _found(hermes, lambda s: bool(s.text_before)).text_before
    assert len(_found(hermes, lambda s: len(s.calls) == 2).calls) == 2
    between = _found(FORMATS["granite4"], lambda s: bool(s.text_between))
    assert len(between.calls) >= 2
    native = _found(kimi, lambda s: str(s.calls[0].id).startswith("functions."))
    assert re.fullmatch(rf"functions\.{native.calls[0].name}(:\d+)?", str(native.calls[0].id))
    minted = _found(kimi, lambda s: str(s.calls[0].id).startswith("call_"))  # seed 000's shape
    assert kimi.doubt(minted) is not None
    assert _found(hermes, lambda s: s.calls[-1].name != "get_weather").calls[-1].name in NAMES


def test_a_marker_lands_inside_a_json_string_but_never_in_a_verbatim_value() -> None:
    def closing(s: Script) -> bool:
        return any("</tool_call>" in text for text in _texts(s))

    assert closing(_found(FORMATS["hermes"], closing))
    for name in ("qwen3_xml", "minimax_m2"):
        markers = FORMATS[name].markers

        def marked(s: Script, markers: tuple[str, ...] = markers) -> bool:
            return any(m in t for t in _texts(s) for m in markers)

        with pytest.raises(NoSuchExample):
            _found(FORMATS[name], marked)


def _nested(value: Json) -> bool:
    """A container holding a container."""
    items = value if isinstance(value, list) else value.values() if isinstance(value, dict) else []
    return any(isinstance(item, list | dict) for item in items)


def _exponent(value: Json) -> bool:
    return isinstance(value, float) and "e" in repr(value)


def _negative(value: Json) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value < 0


def test_nested_values_unicode_numbers_and_special_tokens_are_reached() -> None:
    hermes = FORMATS["hermes"]
    nested = _found(hermes, lambda s: any(map(_nested, s.calls[0].arguments.values())))
    assert any(map(_nested, nested.calls[0].arguments.values()))
    assert _found(hermes, lambda s: any(not t.isascii() for t in _texts(s)))
    exponent = _found(hermes, lambda s: any(map(_exponent, s.calls[0].arguments.values())))
    assert any(map(_exponent, exponent.calls[0].arguments.values()))
    negative = _found(hermes, lambda s: any(map(_negative, s.calls[0].arguments.values())))
    assert any(map(_negative, negative.calls[0].arguments.values()))
    llama = FORMATS["llama3_json"]
    tagged = _found(llama, lambda s: any("<|python_tag|>" in t for t in _texts(s)))
    assert "<|python_tag|>" in llama.write(tagged)


def test_tools_for_declares_every_called_name_with_typed_parameters() -> None:
    values: dict[str, Json] = {"s": "x", "i": 1, "n": 1.5, "b": True, "z": None}
    values |= {"a": [1], "o": {"k": 1}}
    script = Script((Call("get_time", values), Call("get_weather"), Call("get_time", {"i": 2})))
    tools = tools_for(FORMATS["hermes"], script)
    assert [t.name for t in tools] == ["get_time", "get_weather"]
    assert tools[0].parameters["properties"] == {
        "s": {"type": "string"},
        "i": {"type": "integer"},
        "n": {"type": "number"},
        "b": {"type": "boolean"},
        "z": {"type": "null"},
        "a": {"type": "array"},
        "o": {"type": "object"},
    }
    assert tools[1].parameters == {"type": "object", "properties": {}}
    # A parameter given several types in a hand-written script lists them.
    mixed = Script((Call("f", {"x": 1}), Call("f", {"x": "1"})))
    assert tools_for(FORMATS["hermes"], mixed)[0].parameters["properties"] == {
        "x": {"type": ["integer", "string"]}
    }
    assert [t.name for t in tools_for(FORMATS["hermes"], script, declared=("get_weather",))] == [
        "get_weather"
    ]
    with pytest.raises(Unwritable, match="pythonic"):
        tools_for(FORMATS["pythonic"], Script((Call("f", {"from": 1}),)))


@CHECK
@given(data=st.data())
def test_drawn_scripts_get_one_type_per_parameter_of_a_schema_typed_format(
    data: st.DataObject,
) -> None:
    fmt = FORMATS["qwen3_xml"]
    script = data.draw(scripts(fmt, NAMES))
    tools = {t.name: t for t in tools_for(fmt, script)}
    assert set(tools) == {c.name for c in script.calls}
    for call in script.calls:
        properties = tools[call.name].parameters["properties"]
        assert set(properties) >= set(call.arguments)
        for key, value in call.arguments.items():
            assert properties[key] == {"type": json_type(value)}


@CHECK
@given(data=st.data())
def test_a_declared_only_format_calls_no_undeclared_tool_unless_asked(
    data: st.DataObject,
) -> None:
    script = data.draw(scripts(FORMATS["glm45"], NAMES))
    assert {c.name for c in script.calls} <= set(NAMES)


def test_undeclared_tools_are_called_only_when_asked() -> None:
    glm = FORMATS["glm45"]
    found = _found(glm, lambda s: not {c.name for c in s.calls} <= set(NAMES), undeclared=True)
    assert glm.unwritable(found) is None
    assert tools_for(glm, found, declared=NAMES)[0].name == "get_weather"


def test_names_a_format_cannot_spell_are_refused() -> None:
    with pytest.raises(ValueError, match=r"pythonic cannot write a call to 'ns\.tool'"):
        scripts(FORMATS["pythonic"], ("get_weather", "ns.tool"))
    with pytest.raises(ValueError, match="no tool names"):
        scripts(FORMATS["hermes"], ())


def test_unclosed_markup_and_quoted_and_empty_names_are_reached() -> None:
    hermes = FORMATS["hermes"]
    unclosed = _found(hermes, lambda s: s.unclosed)
    assert hermes.doubt(unclosed) is not None
    assert not hermes.write(unclosed).endswith("</tool_call>")
    quoted = _found(hermes, lambda s: any('"' in c.name for c in s.calls), undeclared=True)
    assert hermes.doubt(quoted) is None
    empty = _found(hermes, lambda s: any(c.name == "" for c in s.calls), undeclared=True)
    assert hermes.doubt(empty) is not None
    # Never where the output ends with no marker to leave out.
    with pytest.raises(NoSuchExample):
        _found(FORMATS["xlam"], lambda s: s.unclosed)


def test_escaped_unicode_is_drawn_where_a_format_writes_json_strings() -> None:
    hermes = FORMATS["hermes"]
    escaped = _found(hermes, lambda s: s.escaped)
    text = hermes.write(escaped)
    # The same truth, written another way: ASCII only, with \u escapes.
    assert text.isascii() and "\\u" in text
    assert text != hermes.write(dataclasses.replace(escaped, escaped=False))
    assert hermes.doubt(escaped) is None
    # Never where nothing would change: a Python-call format never escapes.
    with pytest.raises(NoSuchExample):
        _found(FORMATS["pythonic"], lambda s: s.escaped)
