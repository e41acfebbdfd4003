"""Proxy fidelity's alignment: a conversation as one dialect-neutral sequence of entries
(messages, calls, tool results, keyed by content without ids), and the alignment of the client's
sequence with the backend's."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from agentfuzz.model.history import (
    AssistantMessage,
    History,
    SystemMessage,
    ToolResult,
    UserMessage,
)

__all__ = ["Entry", "align", "entries", "is_assistant_text", "merge_texts"]


@dataclass(frozen=True)
class Entry:
    """One message, call or tool result, keyed by its content without ids."""

    kind: Literal["message", "call", "result"]
    key: tuple[str, ...]
    # The call id (a call) or the id it answers (a result); "" for a message.
    id: str = ""
    label: str = ""


def _text(text: str) -> str:
    return " ".join(text.split())


def _arguments(raw: str) -> str:
    try:
        return json.dumps(json.loads(raw), sort_keys=True, separators=(",", ":"))
    except ValueError:
        return _text(raw)


def entries(history: History, renamed: dict[str, str]) -> list[Entry]:
    """The history as one sequence; call names go through ``renamed`` (new name -> client's),
    on both sides: a session may feed a renamed tool's call back to the client.

    One assistant turn (assistant items with nothing but reasoning between them) is its calls in
    order, then one entry of its texts joined: a proxy may merge a text and the calls around it
    into one message, merge two adjacent texts, or split them again, and nothing is lost by that.
    Calls first, so that a turn merged with the next one (a result dropped between them) still
    lines up with both: only the result is lost. A system message without text is left out: a
    proxy that drops an empty one (or empty ``instructions``) loses nothing.
    """
    out: list[Entry] = []
    texts: list[str] = []
    calls: list[Entry] = []

    def end_of_turn() -> None:
        out.extend(calls)
        if "".join(texts).strip():
            joined = "".join("".join(t.split()) for t in texts)
            out.append(Entry("message", ("assistant", joined), label=" ".join(texts)))
        texts.clear()
        calls.clear()

    for item in history.items:
        if isinstance(item, AssistantMessage):
            texts.append(item.text or "")
            for call in item.tool_calls:
                name = renamed.get(call.flat_name, call.flat_name)
                key = ("call", name, _arguments(call.arguments))
                calls.append(Entry("call", key, call.id, call.flat_name))
            continue
        if isinstance(item, UserMessage | SystemMessage | ToolResult):
            end_of_turn()
        if isinstance(item, SystemMessage) and not item.text.strip():
            continue  # says nothing: a proxy that drops it loses nothing
        if isinstance(item, UserMessage | SystemMessage):
            out.append(Entry("message", (item.kind, _text(item.text)), label=item.text))
        elif isinstance(item, ToolResult):
            out.append(Entry("result", ("result", _text(item.output)), item.call_id))
    end_of_turn()
    return out


def align(sent: list[Entry], got: list[Entry]) -> dict[int, int]:
    """Client position -> backend position: the most entries equal in content, in order, and
    among those alignments the one keeping the most ids (a longest common subsequence; difflib's
    blocks would pair a repeated call with its twin one turn off)."""
    n, m = len(sent), len(got)
    # best[i][j]: (matches, ids kept) over sent[i:] and got[j:].
    best = [[(0, 0)] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            top = max(best[i + 1][j], best[i][j + 1])
            if sent[i].key == got[j].key:
                matches, kept = best[i + 1][j + 1]
                top = max(top, (matches + 1, kept + (sent[i].id == got[j].id)))
            best[i][j] = top
    matched: dict[int, int] = {}
    i = j = 0
    while i < n and j < m:
        if sent[i].key == got[j].key:
            matches, kept = best[i + 1][j + 1]
            if best[i][j] == (matches + 1, kept + (sent[i].id == got[j].id)):
                matched[i] = j
                i, j = i + 1, j + 1
                continue
        if best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return matched


def is_assistant_text(entry: Entry) -> bool:
    return entry.kind == "message" and entry.key[0] == "assistant"


def merge_texts(sent: list[Entry], got: list[Entry], matched: dict[int, int]) -> None:
    """Match, in ``matched``, the client's assistant texts that reached the backend as one: in
    order, unmatched on both sides, the backend's text their concatenation (two turns that a
    lost result between them made one; the result is that loss, the texts were not lost)."""
    free = [i for i, e in enumerate(sent) if i not in matched and is_assistant_text(e)]
    reached = set(matched.values())
    for g, entry in enumerate(got):
        if g not in reached and is_assistant_text(entry):
            run = _joining(sent, free, entry.key[1])
            matched.update({i: g for i in run})
            free = [i for i in free if i not in run]


def _joining(sent: list[Entry], free: list[int], target: str) -> list[int]:
    """Two or more consecutive ``free`` client texts whose concatenation is ``target``."""
    for start in range(len(free)):
        joined = ""
        for end in range(start, len(free)):
            joined += sent[free[end]].key[1]
            if joined == target and end > start:
                return free[start : end + 1]
            if not target.startswith(joined) or joined == target:
                break
    return []
