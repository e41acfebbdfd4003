"""Proxy fidelity: what the backend behind a proxy received, against what the client sent.

Both bodies, chat or Responses (a proxy may translate one into the other), come read back into
cases by the pipeline (``dialects.proxied``: ``Observation.sent``, ``BackendRequest.read``); here
each history is flattened into one dialect-neutral sequence of messages, calls and tool
results. The two sequences are aligned on content alone (role and text, tool name and
arguments, result output), never on ids, so an id a proxy changed still lines up with the one
the client sent. Then ids, pairing, losses and additions are compared along that alignment.

Tolerated, because a proxy may legitimately do them: content as a string or as a list of text
parts; whitespace in texts; one assistant turn's texts and calls merged into one message or split
into several (chat messages or Responses items), adjacent texts merged, the turn's text before or
after its calls; a parallel turn's calls sent one at a time, each followed by its result;
arguments re-serialized as equal JSON; ``system`` as ``developer`` or Responses
``instructions``; reasoning (kept, folded or dropped: chat has no reasoning items); knobs and
fields the backend did not get from the client (``stream_options``, defaults, ``strict``,
``model``); a tool renamed (paired with its twin by identical description and parameters) as
long as ``tool_choice`` follows it, history calls named either way; for a Responses request
chained by ``previous_response_id`` that the proxy resolves itself (the backend gets no such
id), the stored conversation it puts before the client's input: the client's entries are
aligned from the end, and what the backend got before the first of them that is not a system
message is taken as that context, with the calls it holds answering the client's results (a
prefix dropped or altered is then not seen); a hosted tool
(``file_search``…) the backend did not get, replaced by one function of the proxy's own that
emulates it; what it does with a part no server reads as text (an image, a part of an unknown
type or with no type) in the last user message: refuse it, drop it, pass it on or read its
``text`` as text, so that message is not compared. The comparison runs once per backend request:
a proxy may retry, and each retry must be faithful on its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from agentfuzz.model.history import Case, Options, Tool
from agentfuzz.model.observation import Observation, Violation
from agentfuzz.oracles._common import one_line
from agentfuzz.oracles._middleman_align import (
    Entry,
    align,
    entries,
    is_assistant_text,
    merge_texts,
)
from agentfuzz.oracles._registry import register

__all__ = ["proxy_fidelity"]

_MODES = ("auto", "none", "required")


def _describe(entry: Entry) -> str:
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
    # A hosted tool the backend did not get as itself may come as a function of the proxy's own
    # that stands for it (LiteLLM's ``litellm_file_search`` for ``file_search``): one each.
    hosted = [t.get("type") for t in sent.history.foreign_tools if t.get("type") != "custom"]
    kept = {t.get("type") for t in got.history.foreign_tools}
    stand_ins = sum(1 for kind in hosted if kind not in kept)
    for tool in got.history.tools:
        if tool.flat_name not in sent_names and tool.flat_name not in renames.values():
            if stand_ins:
                stand_ins -= 1
                continue
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


def _ids(pairs: list[tuple[Entry, Entry]]) -> Iterator[Violation]:
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


def _changed(sent: Entry, got: Entry) -> Violation:
    what, evidence = _describe(sent), f"{sent.kind} id {sent.id!r} -> {got.id!r}"
    if sent.id and not got.id:
        return _finding("id_dropped", f"the {what} reached the backend without its id", evidence)
    return _finding("id_rewritten", f"the {what} reached the backend with id {got.id!r}", evidence)


def _pairing(
    sent: list[Entry], got: list[Entry], matched: dict[int, int], stored: int = 0
) -> Iterator[Violation]:
    """Results whose id changed: attached at the backend to another call than the client
    attached them to (``repaired``), or pointing nowhere now. A result left without its call
    because the call was lost or renumbered alone is that call's finding, not the result's. A
    result whose call the client did not send, attached to a call in the first ``stored``
    backend entries (a chained request's stored context), is paired as the client meant."""
    back = {g: s for s, g in matched.items()}

    def calls(entries: list[Entry], call_id: str) -> set[int]:
        return {i for i, e in enumerate(entries) if e.kind == "call" and e.id == call_id}

    for s, g in matched.items():
        if sent[s].kind != "result":
            continue
        if sent[s].id and not got[g].id:
            yield _changed(sent[s], got[g])
            continue
        mine = calls(sent, sent[s].id)
        if not mine and calls(got, got[g].id) and max(calls(got, got[g].id)) < stored:
            continue
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
    sent: list[Entry], got: list[Entry], matched: dict[int, int], stored: int = 0
) -> Iterator[Violation]:
    kinds = {"message": "message_lost", "call": "call_lost", "result": "result_lost"}
    reached = set(matched.values())
    # A result unmatched on both sides under the same id reached the backend, its output changed.
    unmatched = {e.id: i for i, e in enumerate(got) if i not in reached and e.kind == "result"}
    for i, entry in enumerate(sent):
        if i in matched:
            continue
        what = _describe(entry)
        twin = unmatched.pop(entry.id, None) if entry.kind == "result" and entry.id else None
        if twin is None:
            yield _finding(kinds[entry.kind], f"the {what} never reached the backend", what)
            continue
        reached.add(twin)
        change = f"{one_line(entry.key[1], 60)!r} -> {one_line(got[twin].key[1], 60)!r}"
        yield _finding(
            "result_altered", f"the {what} reached the backend with its output changed", change
        )
    for i, entry in enumerate(got):
        if i not in reached and i >= stored:
            what = _describe(entry)
            yield _finding("injected", f"the backend received a {what} the client never sent", what)


# Message forms that put a part no server reads as text into the last user message.
_ODD_PARTS = ("image_part", "unknown_part", "untyped_part")


def _but_last_user(found: list[Entry]) -> list[Entry]:
    users = [i for i, e in enumerate(found) if e.kind == "message" and e.key[0] == "user"]
    return [e for i, e in enumerate(found) if not users or i != users[-1]]


def compare(sent: Case, got: Case) -> list[Violation]:
    """Every way ``got`` (as the backend received it) differs from ``sent`` beyond tolerance."""
    renames = _renames(sent.history.tools, got.history.tools)
    back = {new: old for old, new in renames.items()}
    mine, theirs = entries(sent.history, back), entries(got.history, back)
    mine, theirs = _calls_first(mine), _calls_first(theirs)
    if any(form in _ODD_PARTS for form in sent.options.forms):
        mine, theirs = _but_last_user(mine), _but_last_user(theirs)
    chained = _chained(sent) and not _chained(got)
    matched = _align_from_end(mine, theirs) if chained else align(mine, theirs)
    merge_texts(mine, theirs, matched)
    pairs = [(mine[s], theirs[g]) for s, g in matched.items()]
    stored = _stored(mine, matched, len(theirs)) if chained else 0
    return [
        *_tools(sent, got, renames),
        *_ids(pairs),
        *_pairing(mine, theirs, matched, stored),
        *_lost_and_injected(mine, theirs, matched, stored),
    ]


def _calls_first(found: list[Entry]) -> list[Entry]:
    """``found`` with each run of calls, results and assistant texts (no user or system
    message between them) in one order: its calls, the texts before its first result, its
    results, the texts after; unless a result in it comes before a call to answer. A proxy that
    sends a parallel turn's calls one at a time, each followed by its result (and the turn's
    text with the first), loses nothing. The price: a result moved past a later turn's call is
    not seen."""
    out: list[Entry] = []
    run: list[Entry] = []

    def flush() -> None:
        # By count, not by id: the same verdict on both sides when a proxy changed the ids.
        owed, paired = 0, True
        for entry in run:
            owed += (entry.kind == "call") - (entry.kind == "result")
            paired = paired and owed >= 0
        if paired:
            # Stable: the calls, the texts said with them, the results, the texts after those.
            first = next((i for i, e in enumerate(run) if e.kind == "result"), len(run))
            rank = {"call": 0, "result": 2}
            order = [rank.get(e.kind, 1 if i < first else 3) for i, e in enumerate(run)]
            run[:] = [e for _, _, e in sorted(zip(order, range(len(run)), run, strict=True))]
        out.extend(run)
        run.clear()

    for entry in found:
        if entry.kind in ("call", "result") or is_assistant_text(entry):
            run.append(entry)
            continue
        flush()
        out.append(entry)
    flush()
    return out


def _chained(case: Case) -> bool:
    return bool(case.options.fields.get("previous_response_id"))


def _align_from_end(sent: list[Entry], got: list[Entry]) -> dict[int, int]:
    """``align``, preferring the latest backend entries: the client's input comes after the
    stored context, which may repeat it."""
    n, m = len(sent), len(got)
    backwards = align(sent[::-1], got[::-1])
    return {n - 1 - s: m - 1 - g for s, g in sorted(backwards.items(), reverse=True)}


def _stored(sent: list[Entry], matched: dict[int, int], size: int) -> int:
    """How many backend entries come before the client's input: before the first of its
    entries, not a system message, that reached the backend (all of them when none did)."""
    starts = [g for s, g in matched.items() if sent[s].key[:1] != ("system",)]
    return min(starts, default=size)


@register(
    "proxy_fidelity",
    expected="What the backend receives is what the client sent: ids, pairing and "
    "results unchanged.",
    look_for="what the backend received behind the proxy (the backend requests in the "
    "bundle's cassette.yaml) against the request sent here: an id, call or result changed, "
    "an item lost or added, or no backend request at all",
)
def proxy_fidelity(case: Case, obs: Observation) -> Iterator[Violation]:
    """Middleman mode: what reached the backend differs from what the client sent the proxy.

    Every request the backend received while this one was in flight must carry
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
    sent = obs.sent
    if not isinstance(sent, Case):
        return  # a raw body, or one the importer cannot read back, cannot be compared
    seen: set[str] = set()
    for request in obs.backend:
        got = request.read
        if got is None:
            continue  # not read by the pipeline: nothing to compare
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
