"""A finding's conversation as ``index.html`` draws it: the request's history as chat bubbles
and the failing answer beside it, marked with what failed.

Every id is shown as an id of the API the request went out on (``doc["api"]``): a chat id is
judged with the chat families only."""

from __future__ import annotations

from typing import Any

from agentfuzz.output.reports._html_escape import as_json, esc, id_chip, marked
from agentfuzz.output.reports._model import FindingView
from agentfuzz.output.reports._model import as_dict as _dict
from agentfuzz.output.reports._model import as_list as _list


def conversation(doc: dict[str, Any]) -> str:
    """The minimal request's history as chat bubbles (from the dialect-neutral case), or its
    body's messages when the bundle has no case."""
    api = doc.get("api")
    items = _list(_dict(_dict(doc.get("case")).get("history")).get("items"))
    if items:
        return "".join(_item(_dict(it), api) for it in items)
    request = _dict(doc.get("request"))
    entries = _list(request.get("messages")) or _list(request.get("input"))
    if not entries:
        return _bubble("request", "request", f"<pre>{esc(as_json(doc.get('request')))}</pre>")
    return "".join(_entry(_dict(e), api) for e in entries)


def _item(it: dict[str, Any], api: object) -> str:
    kind = it.get("kind")
    if kind in ("user", "system"):
        who = str(it.get("role", kind))
        return _bubble(str(kind), who, _body(it.get("text"), api))
    if kind == "assistant":
        parts = []
        if it.get("reasoning"):
            parts.append(f'<div class="reasoning">{_body(it["reasoning"], api)}</div>')
        if it.get("text"):
            parts.append(_body(it["text"], api))
        parts += [_call(_dict(c), api) for c in _list(it.get("tool_calls"))]
        return _bubble("assistant", "assistant", "".join(parts) or _body(None, api))
    if kind == "tool_result":
        head = f'<div class="for">result for {id_chip(str(it.get("call_id", "")), api)}</div>'
        return _bubble("tool", "tool", head + _body(it.get("output"), api))
    if kind == "reasoning":
        chip = id_chip(str(it.get("id")), api)
        head = f'<div class="for">item {chip}</div>' if it.get("id") else ""
        return _bubble("reasoning", "reasoning", head + _body(it.get("text"), api))
    return _bubble("foreign", str(kind or "item"), f"<pre>{esc(as_json(it.get('body', it)))}</pre>")


def _entry(entry: dict[str, Any], api: object) -> str:
    """A wire message or item, shown as it was sent (no case to read it from)."""
    who = str(entry.get("role") or entry.get("type") or "item")
    css = {"developer": "system", "function_call_output": "tool"}.get(who, who)
    return _bubble(css, who, f"<pre>{marked(as_json(entry), api)}</pre>")


def _call(c: dict[str, Any], api: object) -> str:
    name = "__".join(str(p) for p in (c.get("namespace"), c.get("name")) if p)
    ids = id_chip(str(c.get("id", "")), api)
    if c.get("item_id"):
        ids += f" item {id_chip(str(c['item_id']), api)}"
    return (
        f'<div class="call"><div class="callhead">call <b>{esc(name)}</b> {ids}</div>'
        f"<pre>{esc(c.get('arguments', ''))}</pre></div>"
    )


def answer(f: FindingView) -> str:
    """The failing turn: the answer observed, marked with what failed."""
    api = f.doc.get("api")
    seen = _dict(f.doc.get("observed"))
    parts = []
    status = seen.get("status")
    line = [f"HTTP {status}" if status is not None else "no HTTP status"]
    for key in ("finish_reason", "response_status", "content_type"):
        if seen.get(key):
            line.append(f"{key} {seen[key]}")
    parts.append(f'<div class="status">{esc(" · ".join(line))}</div>')
    if seen.get("failure"):
        parts.append(f'<div class="error">{marked(str(seen["failure"]), api)}</div>')
    if seen.get("reasoning"):
        parts.append(f'<div class="reasoning">{_body(seen["reasoning"], api)}</div>')
    if seen.get("text"):
        parts.append(f'<div class="text">{marked(str(seen["text"]), api)}</div>')
    for c in _list(seen.get("tool_calls")):
        c = _dict(c)
        call = dict(c)
        if c.get("call_id") and c.get("call_id") != c.get("id"):
            call["item_id"] = c.get("id")
            call["id"] = c["call_id"]
        parts.append(_call(call, api))
    for err in _list(seen.get("errors")):
        err = _dict(err)
        detail = marked(str(err.get("detail", "")), api)
        parts.append(f'<div class="error">{esc(err.get("kind", ""))}: {detail}</div>')
    if not (seen.get("text") or seen.get("tool_calls") or seen.get("reasoning")):
        parts.append('<div class="empty">(nothing: no text, no tool call)</div>')
    evidence = f.doc.get("evidence") or seen.get("evidence")
    if evidence:
        parts.append(f'<div class="evidence">evidence: {marked(str(evidence), api)}</div>')
    mark = "".join(f"<b>{esc(s.oracle)}</b>: {marked(s.message, api)}<br>" for s in f.symptoms)
    return (
        '<div class="bubble answer failing"><div class="who">answer observed · '
        f'<span class="flag">✗ failing turn</span></div><div class="why">{mark}</div>'
        f"{''.join(parts)}</div>"
    )


def _bubble(css: str, who: str, inner: str) -> str:
    return f'<div class="bubble {esc(css)}"><div class="who">{esc(who)}</div>{inner}</div>'


def _body(text: object, api: object) -> str:
    if text is None:
        return '<div class="empty">(no text)</div>'
    if text == "":
        return '<div class="empty">(empty text "")</div>'
    return f'<div class="text">{marked(str(text), api)}</div>'
