"""``leaked_markup``: chat-template special tokens in visible text, call names or arguments."""

from __future__ import annotations

import pytest

from agentfuzz.model.history import Case, History, Options, Tool, UserMessage
from agentfuzz.model.observation import Exchange, Observation, ObservedCall, Violation
from agentfuzz.oracles import check

CASE = Case(
    history=History(items=(UserMessage(text="discount?"),)),
    options=Options(include_tools=False),
)
OK = Exchange(url="http://127.0.0.1:8000/v1/chat/completions", request={}, stream=False, status=200)

# Seed 004: a later turn left out ``tools``, so Kimi's call markup came back as content.
SEED_004 = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.calculate_discounted_price:0"
    '<|tool_call_argument_begin|>{"price": 200, "discount": 0.2}<|tool_call_end|>'
    "<|tool_calls_section_end|>"
)


# Hermes tags are plain text: they count only where a tool parser was to read the answer.
TOOLED = Case(history=History(tools=(Tool(name="f"),), items=(UserMessage(text="discount?"),)))


def _leaks(obs: Observation, case: Case = TOOLED) -> list[Violation]:
    return check(case, obs, only=["leaked_markup"])


def test_seed_004_kimi_markup_in_content() -> None:
    # The closing turn left ``tools`` out: special tokens leak all the same.
    (found,) = _leaks(Observation(exchange=OK, text="Let me compute that. " + SEED_004), CASE)
    assert found.signature == "leaked_markup:<|tool_calls_section_begin|>"
    assert found.evidence.startswith("Let me compute that. <|tool_calls_section_begin|>")
    assert "text" in found.message and "<|tool_call_argument_begin|>" in found.message
    assert len(found.evidence) <= 500


def test_signature_leaves_out_the_surrounding_text() -> None:
    one = _leaks(Observation(exchange=OK, text="a <|im_end|> b"))
    two = _leaks(Observation(exchange=OK, text="totally different <|im_end|>"))
    assert one[0].key == two[0].key == ("leaked_markup", "leaked_markup:<|im_end|>")


@pytest.mark.parametrize(
    ("text", "token"),
    [
        ("<|im_start|>assistant\nhi", "<|im_start|>"),
        ('<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>', "<tool_call>"),
        (
            "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{}<|call|>",
            "<|channel|>",
        ),
        ("<|start|>assistant<|message|>hi<|end|>", "<|start|>"),
        ('<|python_tag|>{"name": "f"}<|eom_id|>', "<|python_tag|>"),
        ("ok<|eot_id|><|start_header_id|>assistant", "<|eot_id|>"),
        ('[TOOL_CALLS][{"name": "f", "arguments": {}}]', "[TOOL_CALLS]"),
        ("answer [/INST]", "[/INST]"),
        (
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f",
            "<｜tool▁calls▁begin｜>",
        ),
        ("<start_of_turn>model\nhi<end_of_turn>", "<start_of_turn>"),
        ("<function=get_weather>\n<parameter=city>Paris</parameter>", "<function=…>"),
        ("<|reserved_special_token_7|>", "<|reserved_special_token_7|>"),
    ],
)
def test_every_known_format_is_caught_and_named(text: str, token: str) -> None:
    (found,) = _leaks(Observation(exchange=OK, text=text))
    assert found.signature == f"leaked_markup:{token}"
    assert token.rstrip("…>") in found.evidence


def test_markup_in_call_name_and_arguments() -> None:
    call = ObservedCall(0, "call_1", "get_weather<|tool_call_end|>", '{"city": "<|im_end|>"}')
    found = _leaks(Observation(exchange=OK, tool_calls=(call,)))
    assert [v.signature for v in found] == [
        "leaked_markup:<|tool_call_end|>",
        "leaked_markup:<|im_end|>",
    ]
    assert "name" in found[0].message and "arguments" in found[1].message


@pytest.mark.parametrize(
    "text",
    [
        "if a < b || c > d then x | y",
        "| col | col |\n|-----|-----|\n| <b> | a|b |",
        "Use `a <| b` or <div>|</div>; 3 <| 4 |> 5",
        "The pipe `|` and the tag <tool> are fine; so is [INSTRUCTIONS].",
        "<think>ordinary tags are not special tokens</think>",
    ],
)
def test_ordinary_text_with_angle_brackets_and_pipes_is_silent(text: str) -> None:
    assert _leaks(Observation(exchange=OK, text=text)) == []


def test_reasoning_is_not_scanned() -> None:
    obs = Observation(exchange=OK, text="Here you go.", reasoning="Kimi wraps calls in " + SEED_004)
    assert _leaks(obs) == []


def test_refusals_are_not_judged() -> None:
    obs = Observation(exchange=OK, text=SEED_004, refused=True)
    assert _leaks(obs) == []


@pytest.mark.parametrize(
    "text",
    [
        # A model writing about its template, not a call a parser missed.
        "Return the call within <tool_call></tool_call> XML tags.",
        "Wrap it in <tool_call> and </tool_call>.",
        # The result wrapper: in an answer it is the model imitating the prompt.
        "<tool_response>\n\n</tool_response>",
        "MCP_RUN\n</tool_response>\n<tool_response>\nMCP_RUN",
    ],
    ids=["empty-pair", "prose-pair", "tool-response", "tool-response-reversed"],
)
def test_hermes_tags_a_model_wrote_as_words_do_not_count(text: str) -> None:
    assert _leaks(Observation(exchange=OK, text=text)) == []


@pytest.mark.parametrize(
    ("text", "token"),
    [
        ('<tool_call>\n{"name": "f", "arguments": {"a": 1', "<tool_call>"),
        ('{"name": "f", "arguments": {}}\n</tool_call>', "</tool_call>"),
        ("Done.\n</tool_call>", "</tool_call>"),
        ('I will call it: <tool_call>{"name": "f"}</tool_call>', "<tool_call>"),
    ],
    ids=["open-payload", "close-payload", "leftover-close", "after-prose"],
)
def test_hermes_tags_around_a_call_payload_count(text: str, token: str) -> None:
    call = ObservedCall(index=0, id="a", name="f", arguments="{}")
    (found,) = _leaks(Observation(exchange=OK, text=text, tool_calls=[call]))
    assert found.signature == f"leaked_markup:{token}"


@pytest.mark.parametrize(
    ("text", "leaked"),
    [
        ('{"name": "f", "arguments": {}}\n</tool_call>', True),
        ("Done.\n</tool_call>", False),
        ('f:\n{"name": "f", "description": "Call f.", "parameters": {}}\n</tool_call>', False),
    ],
    ids=["call-payload", "after-prose", "after-declaration"],
)
def test_a_close_tag_without_a_call_counts_only_after_a_call_payload(
    text: str, leaked: bool
) -> None:
    # No call in the answer: no parser took one out, so only a whole call left unopened counts
    # (the vLLM campaign saw SmolLM2 copy a tool's declaration and close it with the tag).
    found = _leaks(Observation(exchange=OK, text=text))
    assert [v.signature for v in found] == (["leaked_markup:</tool_call>"] if leaked else [])


@pytest.mark.parametrize(
    "cut", [{"finish_reason": "length"}, {"status": "incomplete"}], ids=["chat", "responses"]
)
def test_a_turn_cut_by_the_token_limit_is_signed_apart(cut: dict[str, str]) -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"type": "obj'
    (found,) = _leaks(Observation(exchange=OK, text=text, **cut))  # type: ignore[arg-type]
    assert found.signature == "leaked_markup:<tool_call>:truncated"
    (whole,) = _leaks(Observation(exchange=OK, text=text + '"}}\n</tool_call>'))
    assert whole.signature == "leaked_markup:<tool_call>"


def test_a_hermes_call_copied_from_the_history_without_tools_is_the_models() -> None:
    text = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    assert _leaks(Observation(exchange=OK, text=text), CASE) == []
    (found,) = _leaks(Observation(exchange=OK, text=text))
    assert found.signature == "leaked_markup:<tool_call>"
