"""The special tokens of the chat-template families, for the ``special_token`` relation: the
spellings it puts in user text, how it counts them and the near miss it swaps each for."""

from __future__ import annotations

from agentfuzz.model.history import Case, UserMessage

# Special tokens of the chat-template families, each four or more tokens long when it is read
# as text (so reading it as one control token saves at least three). Tokens that some
# tokenizers keep as ordinary vocabulary (``<tool_call>``, ``<think>``) are left out: reading
# those as one token is how such a model spells them, not a control token.
SPECIAL_TOKENS = (
    "<|im_end|>",
    "<|im_start|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|begin_of_text|>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "<|im_middle|>",
    "<|channel|>",
    "<|message|>",
    "<|start|>",
    "<|end|>",
    "<|return|>",
    "[TOOL_CALLS]",
    "[INST]",
    "[/INST]",
    "<start_of_turn>",
    "<end_of_turn>",
    "<｜end▁of▁sentence｜>",
    "<｜tool▁calls▁begin｜>",
)
# Longest first, so a spelling inside a longer one is never counted twice.
_BY_LENGTH = tuple(sorted(SPECIAL_TOKENS, key=len, reverse=True))


def near_miss(token: str) -> str:
    """``token`` with its second-to-last character taken out (``<|im_end>``): the same text to
    a tokenizer that reads it as text, give or take one token, and no special token at all."""
    return token[:-2] + token[-1]


def special_count(case: Case) -> int:
    """How many special-token spellings the case's user messages hold."""
    return sum(_count(i.text) for i in case.history.items if isinstance(i, UserMessage))


def _count(text: str) -> int:
    found = 0
    for token in _BY_LENGTH:
        found += text.count(token)
        text = text.replace(token, "\0")
    return found


def miss_all(text: str) -> str:
    """``text`` with every special-token spelling in it swapped for its near miss."""
    for token in _BY_LENGTH:
        text = text.replace(token, near_miss(token))
    return text
