"""The puppet's script, as this server reads it from a request's ``vllm_xargs``.

A request may carry the text its model is to write (docs/puppet.md, "The script channel"):
``vllm_xargs.agentfuzz_puppet`` holds one JSON object encoded as a string, with ``v: 1`` and
either ``text`` or a mimic script's ``template``, ``pattern`` and ``default``. The client side
writes it with ``agentfuzz.puppet.channel``; this server reads it with its own decoder, written
from the docs alone, so a bug in one reading cannot hide the same bug in the other. Other keys
in the object (a ``format``, a ``script``, a ``tag``) are the client's and are ignored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .refusal import BadRequest

__all__ = ["Script", "read_script"]

_KEY = "agentfuzz_puppet"
_HEADER = "{{header}}"
_VERSION = 1


@dataclass(frozen=True)
class Script:
    """What the model writes: ``text``, or ``template`` with each ``{{header}}`` replaced by
    the header copied from the prompt (``pattern``'s last match there, else ``default``)."""

    text: str | None = None
    template: str = ""
    pattern: str = ""
    default: str = ""

    def text_for(self, prompt: str) -> str:
        """The model's raw output after ``prompt``."""
        if self.text is not None:
            return self.text
        return self.template.replace(_HEADER, self._header(prompt))

    def _header(self, prompt: str) -> str:
        matches = list(re.finditer(self.pattern, prompt))
        if not matches:
            return self.default
        last = matches[-1]
        if "header" in last.re.groupindex:
            return last.group("header") or ""
        return (last.group(1) if last.re.groups else last.group(0)) or ""


def read_script(body: dict[str, Any]) -> Script | None:
    """The script ``body`` carries, or None; a ``BadRequest`` (a JSON 400, as vLLM answers a
    processor's ``ValueError``) for a value that cannot be read."""
    xargs = body.get("vllm_xargs")
    if xargs is None:
        return None
    if not isinstance(xargs, dict):
        raise BadRequest("vllm_xargs must be an object")
    if _KEY not in xargs:
        return None
    value = xargs[_KEY]
    if not isinstance(value, str):
        raise BadRequest(f"vllm_xargs.{_KEY} must be a JSON string")
    try:
        fields = json.loads(value)
    except (ValueError, RecursionError):
        raise BadRequest(f"vllm_xargs.{_KEY} is not JSON") from None
    if not isinstance(fields, dict):
        raise BadRequest(f"vllm_xargs.{_KEY} must hold a JSON object")
    if fields.get("v") != _VERSION:
        raise BadRequest(f"vllm_xargs.{_KEY}: version {fields.get('v')!r}, expected {_VERSION}")
    if "text" in fields:
        return Script(text=_string(fields, "text"))
    if "template" not in fields:
        raise BadRequest(f"vllm_xargs.{_KEY} holds neither 'text' nor 'template'")
    pattern = _string(fields, "pattern")
    try:
        re.compile(pattern)
    except re.error as exc:
        raise BadRequest(f"vllm_xargs.{_KEY}: the pattern does not compile: {exc}") from None
    return Script(None, _string(fields, "template"), pattern, _string(fields, "default"))


def _string(fields: dict[str, Any], name: str) -> str:
    value = fields.get(name)
    if not isinstance(value, str):
        raise BadRequest(f"vllm_xargs.{_KEY}: {name!r} must be a string")
    return value
