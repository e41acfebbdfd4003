"""Proxy fidelity: what the backend behind a proxy received, against what the client sent.

Both bodies, chat or Responses (a proxy may translate one into the other), are read back into a
``History`` by the importer and flattened into one dialect-neutral sequence of messages, calls
and tool results. The two sequences are aligned on content alone (role and text, tool name and
arguments, result output), never on ids, so an id a proxy changed still lines up with the one
the client sent. Then ids, pairing, losses and additions are compared along that alignment.

Tolerated, because a proxy may legitimately do them: content as a string or as a list of text
parts; whitespace in texts; one assistant turn's texts and calls merged into one message or split
into several (chat messages or Responses items), adjacent texts merged, the turn's text before or
after its calls; arguments re-serialized as equal JSON; ``system`` as ``developer`` or Responses
``instructions``; reasoning (kept, folded or dropped: chat has no reasoning items); knobs and
fields the backend did not get from the client (``stream_options``, defaults, ``strict``,
``model``); a tool renamed (paired with its twin by identical description and parameters) as
long as ``tool_choice`` follows it, history calls named either way. The comparison runs once per
backend request: a proxy may retry, and each retry must be faithful on its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from agentfuzz.dialects.importing import InputError, parse_request
from agentfuzz.history import (
    Api,
    AssistantMessage,
    Case,
    History,
    Options,
    SystemMessage,
    Tool,
    ToolResult,
    UserMessage,
)
from agentfuzz.observation import BackendRequest, Observation, Violation
from agentfuzz.oracles._common import one_line
from agentfuzz.oracles._registry import register

__all__ = ["proxy_fidelity"]

_MODES = ("auto", "none", "required")


@dataclass(frozen=True)
class _Entry:
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


def _entries(history: History, renamed: dict[str, str]) -> list[_Entry]:
    """The history as one sequence; call names go through ``renamed`` (new name -> client's),
    on both sides: a session may feed a renamed tool's call back to the client.

    One assistant turn (assistant items with nothing but reasoning between them) is its calls in
    order, then one entry of its texts joined: a proxy may merge a text and the calls around it
    into one message, merge two adjacent texts, or split them again, and nothing is lost by that.
    Calls first, so that a turn merged with the next one (a result dropped between them) still
    lines up with both: only the result is lost.
    """
    out: list[_Entry] = []
    texts: list[str] = []
    calls: list[_Entry] = []

    def end_of_turn() -> None:
        out.extend(calls)
        if "".join(texts).strip():
            joined = "".join("".join(t.split()) for t in texts)
            out.append(_Entry("message", ("assistant", joined), label=" ".join(texts)))
        texts.clear()
        calls.clear()

    for item in history.items:
        if isinstance(item, AssistantMessage):
            texts.append(item.text or "")
            for call in item.tool_calls:
                name = renamed.get(call.flat_name, call.flat_name)
                key = ("call", name, _arguments(call.arguments))
                calls.append(_Entry("call", key, call.id, call.flat_name))
            continue
        if isinstance(item, UserMessage | SystemMessage | ToolResult):
            end_of_turn()
        if isinstance(item, UserMessage | SystemMessage):
            out.append(_Entry("message", (item.kind, _text(item.text)), label=item.text))
        elif isinstance(item, ToolResult):
            out.append(_Entry("result", ("result", _text(item.output)), item.call_id))
    end_of_turn()
    return out


def _describe(entry: _Entry) -> str:
    if entry.kind == "call":
        return f"call {entry.id!r} ({entry.label})"
    if entry.kind == "result":
        return f"tool result for {entry.id!r}"
    return f"{entry.key[0]} message {one_line(entry.label, 60)!r}"


def _finding(kind: str, message: str, evidence: str) -> Violation:
    return Violation(
        oracle="proxy_fidelity",
        message=one_line(message, 200),
        evidence=evidence,
        signature=f"proxy_fidelity:{kind}",
    )


def _tool_key(tool: Tool) -> str:
    return json.dumps([tool.description, tool.parameters], sort_keys=True)


def _renames(sent: tuple[Tool, ...], got: tuple[Tool, ...]) -> dict[str, str]:
    """Client tool name -> backend tool name, for tools that only changed their name."""
    names = {t.flat_name for t in got}
    missing = [t for t in sent if t.flat_name not in names]
    extra = [t for t in got if t.flat_name not in {s.flat_name for s in sent}]
    renames: dict[str, str] = {}
    for tool in missing:
        twins = [t for t in extra if _tool_key(t) == _tool_key(tool)]
        if len(twins) == 1:
            renames[tool.flat_name] = twins[0].flat_name
            extra.remove(twins[0])
    return renames


def _choice(options: Options) -> str | None:
    choice = options.tool_choice
    return None if choice is None or choice in _MODES else choice


def _tools(sent: Case, got: Case, renames: dict[str, str]) -> Iterator[Violation]:
    got_names = {t.flat_name for t in got.history.tools}
    sent_names = {t.flat_name for t in sent.history.tools}
    for tool in sent.history.tools:
        if tool.flat_name not in got_names and tool.flat_name not in renames:
            yield _finding(
                "tool_lost",
                f"the declared tool {tool.flat_name!r} never reached the backend",
                f"tool {tool.flat_name!r}",
            )
    for tool in got.history.tools:
        if tool.flat_name not in sent_names and tool.flat_name not in renames.values():
            yield _finding(
                "injected",
                f"the backend received a tool the client never declared: {tool.flat_name!r}",
                f"tool {tool.flat_name!r}",
            )
    chosen, forced = _choice(sent.options), _choice(got.options)
    if chosen is None or forced is None:
        return
    expected = renames.get(chosen, chosen)
    if forced == expected:
        return
    if expected != chosen:
        message = (
            f"the tool {chosen!r} reached the backend as {expected!r}, tool_choice as {forced!r}"
        )
    else:
        message = f"tool_choice {chosen!r} reached the backend as {forced!r}, its tool unchanged"
    evidence = f"tool_choice {chosen!r} -> {forced!r}; tool {chosen!r} -> {expected!r}"
    yield _finding("tool_renamed", message, evidence)


def _ids(pairs: list[tuple[_Entry, _Entry]]) -> Iterator[Violation]:
    """Call ids changed, emptied or merged along the alignment (results: see ``_pairing``)."""
    calls = [(sent, got) for sent, got in pairs if sent.kind == "call"]
    merged: dict[str, set[str]] = {}
    for sent, got in calls:
        if got.id:
            merged.setdefault(got.id, set()).add(sent.id)
    collapsed = {new: olds for new, olds in merged.items() if len(olds) > 1}
    for new, olds in collapsed.items():
        shown = ", ".join(repr(o) for o in sorted(olds)[:4])
        yield _finding(
            "id_collapsed",
            f"distinct call ids {shown} reached the backend as one id, {new!r}",
            f"{sorted(olds)} -> {new!r}",
        )
    for sent, got in calls:
        if sent.id != got.id and got.id not in collapsed:
            yield _changed(sent, got)


def _changed(sent: _Entry, got: _Entry) -> Violation:
    what, evidence = _describe(sent), f"{sent.kind} id {sent.id!r} -> {got.id!r}"
    if sent.id and not got.id:
        return _finding("id_dropped", f"the {what} reached the backend without its id", evidence)
    return _finding("id_rewritten", f"the {what} reached the backend with id {got.id!r}", evidence)


def _pairing(sent: list[_Entry], got: list[_Entry], matched: dict[int, int]) -> Iterator[Violation]:
    """Results whose id changed: attached at the backend to another call than the client
    attached them to (``repaired``), or pointing nowhere now. A result left without its call
    because the call was lost or renumbered alone is that call's finding, not the result's."""
    back = {g: s for s, g in matched.items()}

    def calls(entries: list[_Entry], call_id: str) -> set[int]:
        return {i for i, e in enumerate(entries) if e.kind == "call" and e.id == call_id}

    for s, g in matched.items():
        if sent[s].kind != "result":
            continue
        if sent[s].id and not got[g].id:
            yield _changed(sent[s], got[g])
            continue
        mine = calls(sent, sent[s].id)
        # Backend calls named by position in the client's sequence; an injected one is its own.
        theirs = {back.get(i, -1 - i) for i in calls(got, got[g].id)}
        if theirs and mine.isdisjoint(theirs):
            now = sorted(got[i].label for i in calls(got, got[g].id))
            yield _finding(
                "repaired",
                f"the tool result for {sent[s].id!r} reached the backend paired with another "
                f"call ({got[g].id!r})",
                f"result {sent[s].id!r} -> {got[g].id!r}; backend calls {now[:4]}",
            )
        elif not theirs and sent[s].id != got[g].id:
            yield _changed(sent[s], got[g])


def _lost_and_injected(
    sent: list[_Entry], got: list[_Entry], matched: dict[int, int]
) -> Iterator[Violation]:
    kinds = {"message": "message_lost", "call": "call_lost", "result": "result_lost"}
    for i, entry in enumerate(sent):
        if i not in matched:
            what = _describe(entry)
            yield _finding(kinds[entry.kind], f"the {what} never reached the backend", what)
    reached = set(matched.values())
    for i, entry in enumerate(got):
        if i not in reached:
            what = _describe(entry)
            yield _finding("injected", f"the backend received a {what} the client never sent", what)


def _align(sent: list[_Entry], got: list[_Entry]) -> dict[int, int]:
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


def _assistant_text(entry: _Entry) -> bool:
    return entry.kind == "message" and entry.key[0] == "assistant"


def _merged_texts(sent: list[_Entry], got: list[_Entry], matched: dict[int, int]) -> None:
    """Match, in ``matched``, the client's assistant texts that reached the backend as one: in
    order, unmatched on both sides, the backend's text their concatenation (two turns that a
    lost result between them made one; the result is that loss, the texts were not lost)."""
    free = [i for i, e in enumerate(sent) if i not in matched and _assistant_text(e)]
    reached = set(matched.values())
    for g, entry in enumerate(got):
        if g not in reached and _assistant_text(entry):
            run = _joining(sent, free, entry.key[1])
            matched.update({i: g for i in run})
            free = [i for i in free if i not in run]


def _joining(sent: list[_Entry], free: list[int], target: str) -> list[int]:
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


def compare(sent: Case, got: Case) -> list[Violation]:
    """Every way ``got`` (as the backend received it) differs from ``sent`` beyond tolerance."""
    renames = _renames(sent.history.tools, got.history.tools)
    back = {new: old for old, new in renames.items()}
    mine, theirs = _entries(sent.history, back), _entries(got.history, back)
    matched = _align(mine, theirs)
    _merged_texts(mine, theirs, matched)
    pairs = [(mine[s], theirs[g]) for s, g in matched.items()]
    return [
        *_tools(sent, got, renames),
        *_ids(pairs),
        *_pairing(mine, theirs, matched),
        *_lost_and_injected(mine, theirs, matched),
    ]


def _backend_case(request: BackendRequest) -> Case | str:
    api: Api = "responses" if request.path.rstrip("/").endswith("/responses") else "chat"
    try:
        return parse_request(request.body, api)
    except InputError as exc:
        return str(exc)


@register("proxy_fidelity")
def proxy_fidelity(case: Case, obs: Observation) -> Iterator[Violation]:
    """Proxy mode: every request the backend received while this one was in flight must carry
    what the client sent (see the module docstring for what is tolerated), and a 2xx answer
    must come from at least one backend request.

    ``no_backend_request`` assumes the proxy does not cache answers: fuzzing sends the same
    request again on purpose (shrinking, confirming), so run a caching proxy with its cache off.
    """
    if obs.backend is None:
        return
    ex = obs.exchange
    if not obs.backend:
        if ex.status is not None and 200 <= ex.status < 300 and ex.failure is None:
            yield _finding(
                "no_backend_request",
                f"the client got HTTP {ex.status} but the backend received no request",
                f"{ex.url}",
            )
        return
    try:
        sent = parse_request(ex.request, "responses" if obs.api == "responses" else "chat")
    except InputError:
        return  # a body the importer cannot read back cannot be compared
    seen: set[str] = set()
    for request in obs.backend:
        got = _backend_case(request)
        if isinstance(got, str):
            found = [
                _finding(
                    "unreadable",
                    f"the backend received a body that is not a chat or Responses request: {got}",
                    f"{request.path}: {one_line(json.dumps(request.body), 300)}",
                )
            ]
        else:
            found = compare(sent, got)
        for v in found:
            # One violation per kind and request: the first shows the fault, the rest repeat it.
            if v.signature not in seen:
                seen.add(v.signature)
                yield v
