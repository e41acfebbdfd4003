"""How a script travels in a request to a server running the puppet processor.

A request carries its script in vLLM's per-request arguments: the body's ``vllm_xargs`` (on
chat completions, Responses and completions), which vLLM hands to the processor as
``SamplingParams.extra_args``. vLLM admits only flat values there (strings, numbers, lists of
them), so the script is one JSON object encoded as a string under one key, ``KEY``. Both sides
read this module, the client to write the value and the processor to read it, so the two cannot
drift apart. Stdlib only: the server's Python imports it beside the processor.

Two kinds of script:

- ``Text``: the model writes exactly this text.
- ``Mimic``: the model writes ``template`` with ``HEADER`` replaced by the last match of
  ``pattern`` in the prompt (the rendered conversation, special tokens spelled out). This is the
  way a model imitates its history: given a history whose last call id is ``call_abc123``, it
  writes that id as its own call's header. ``default`` is the header when nothing matches.

    body["vllm_xargs"] = encode(Text('<tool_call>\\n{"name": "f", "arguments": {}}\\n</tool_call>'))
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = ["HEADER", "KEY", "ChannelError", "Mimic", "Script", "Text", "decode", "encode"]

# The vllm_xargs key the script travels under.
KEY = "agentfuzz_puppet"
# What a mimic template holds where the copied header goes.
HEADER = "{{header}}"
# The version of the encoding; a processor refuses a value of another version.
VERSION = 1


class ChannelError(ValueError):
    """A script value that cannot be read; ``str()`` says why. vLLM answers a ``ValueError``
    from a processor's parameter check with HTTP 400."""


@dataclass(frozen=True)
class Text:
    """The model writes exactly ``text``. ``tag`` names the request in the server's log."""

    text: str
    tag: str = ""


@dataclass(frozen=True)
class Mimic:
    """The model writes ``template`` with each ``HEADER`` replaced by the header copied from
    the prompt: the last match of ``pattern`` (its group ``header`` if it has one, else its
    first group, else the whole match), or ``default`` when the prompt holds no match."""

    template: str
    pattern: str
    default: str
    tag: str = ""

    def text_for(self, prompt: str) -> str:
        """The text to write after this prompt."""
        return self.template.replace(HEADER, self.header_in(prompt))

    def header_in(self, prompt: str) -> str:
        matches = list(re.finditer(self.pattern, prompt))
        if not matches:
            return self.default
        last = matches[-1]
        if "header" in last.re.groupindex:
            return last.group("header") or ""
        return (last.group(1) if last.re.groups else last.group(0)) or ""


Script: TypeAlias = Text | Mimic


def encode(script: Script, about: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The ``vllm_xargs`` object that carries the script. ``about``: more keys for the same
    JSON object, which a processor ignores (agentfuzz keeps what the text was written from
    there, so the request alone says what the model wrote and why)."""
    if isinstance(script, Text):
        fields: dict[str, Any] = {"text": script.text}
    else:
        fields = {"template": script.template, "pattern": script.pattern}
        fields["default"] = script.default
    if script.tag:
        fields["tag"] = script.tag
    return {KEY: json.dumps({**(about or {}), "v": VERSION, **fields}, ensure_ascii=False)}


def decode(extra_args: Mapping[str, Any] | None) -> Script | None:
    """The script a request's ``extra_args`` carry, or None when they carry none; a
    ``ChannelError`` for a value that cannot be read."""
    if not extra_args or KEY not in extra_args:
        return None
    value = extra_args[KEY]
    if not isinstance(value, str):
        raise ChannelError(f"vllm_xargs.{KEY} must be a JSON string, got {type(value).__name__}")
    try:
        fields = json.loads(value)
    except ValueError as exc:
        raise ChannelError(f"vllm_xargs.{KEY} is not JSON: {exc}") from None
    if not isinstance(fields, dict):
        raise ChannelError(f"vllm_xargs.{KEY} must hold a JSON object")
    if fields.get("v") != VERSION:
        raise ChannelError(f"vllm_xargs.{KEY}: version {fields.get('v')!r}, expected {VERSION}")
    tag = _string(fields, "tag", "")
    if "text" in fields:
        return Text(_string(fields, "text"), tag)
    if "template" in fields:
        return _mimic(fields, tag)
    raise ChannelError(f"vllm_xargs.{KEY} holds neither 'text' nor 'template'")


def _mimic(fields: dict[str, Any], tag: str) -> Mimic:
    pattern = _string(fields, "pattern")
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ChannelError(f"vllm_xargs.{KEY}: the pattern does not compile: {exc}") from None
    return Mimic(_string(fields, "template"), pattern, _string(fields, "default"), tag)


def _string(fields: dict[str, Any], name: str, default: str | None = None) -> str:
    value = fields.get(name, default)
    if not isinstance(value, str):
        raise ChannelError(f"vllm_xargs.{KEY}: {name!r} must be a string")
    return value
