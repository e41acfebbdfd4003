"""``--report html DIR``: one self-contained ``index.html`` (inline CSS and SVG, no script, no
network), for a person reading a run: the mode matrix, each finding as the conversation it
sent and the answer that failed, the failure rate per session turn, and the coverage.

Every string from a bundle is escaped: request and answer bodies come from the server under
test, which may well answer with markup.
"""

from __future__ import annotations

import json
import os
from html import escape
from pathlib import Path
from typing import Any

from agentfuzz.model.files import write_atomically
from agentfuzz.model.summary import TurnRow
from agentfuzz.reports._ids import ID_IN_TEXT, family, group
from agentfuzz.reports._model import API_MODES, Finding, Run
from agentfuzz.reports._model import as_dict as _dict
from agentfuzz.reports._model import as_list as _list
from agentfuzz.reports._text import facts, headline, resend_lines

__all__ = ["write_html"]


def write_html(run: Run, folder: Path) -> Path:
    """Write ``folder/index.html`` and return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "index.html"
    write_atomically(path, page(run, folder))
    return path


def page(run: Run, folder: Path) -> str:
    """The whole page; ``folder`` is where it lives (bundle links are relative to it)."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>agentfuzz report</title>",
        f"<style>{_CSS}</style></head><body><main>",
        "<h1>agentfuzz report</h1>",
        _facts(run),
        _matrix(run),
        '<section id="findings">',
        f"<h2>Findings ({len(run.findings)})</h2>",
        *(_finding(f, folder) for f in run.findings),
        "</section>" if run.findings else '<p class="clean">Nothing failed.</p></section>',
        _turns(run.summary.session_turns),
        _coverage(run),
        "</main></body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _id(value: str) -> str:
    """An id, styled by the family of its shape, the family named beside it."""
    name = family(value)
    shown = value if value.strip() else repr(value)
    return (
        f'<span class="id g-{group(name)}" title="{_e(name)}"><code>{_e(shown)}</code>'
        f'<span class="fam">{_e(name)}</span></span>'
    )


def _text(value: str) -> str:
    """Free text, escaped, with any id-shaped token in it highlighted."""
    out, last = [], 0
    for match in ID_IN_TEXT.finditer(value):
        out += [_e(value[last : match.start()]), _id(match.group())]
        last = match.end()
    out.append(_e(value[last:]))
    return "".join(out)


def _facts(run: Run) -> str:
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_text(v)}</td></tr>" for k, v in facts(run))
    notes = "".join(f'<p class="note">{_e(line)}</p>' for line in headline(run)[1:])
    return (
        f'<p class="headline">{_e(headline(run)[0])}</p>{notes}<table class="facts">{rows}</table>'
    )


def _matrix(run: Run) -> str:
    """Oracle by api/stream: which finding was seen on which mode, and by which kind of
    example (generated, or a session); a dash where the mode did not run."""
    ran = run.api_modes_run
    head = "".join(f"<th>{_e(m)}</th>" for m in API_MODES)
    body = []
    for f in run.findings:
        for s in f.symptoms:
            row = "".join(_cell(s.oracle, m, s.on(m), m in ran, bool(s.modes)) for m in API_MODES)
            name = f'<a href="#finding-{f.number}">#{f.number}</a> <b>{_e(s.oracle)}</b>'
            body.append(f"<tr><th>{name}<div class='sig'>{_e(s.message)}</div></th>{row}</tr>")
    if not body:
        row = "".join(
            '<td class="ok">✓ clean</td>' if m in ran else '<td class="off">–</td>'
            for m in API_MODES
        )
        body.append(f"<tr><th>every oracle</th>{row}</tr>")
    return (
        '<section id="matrix"><h2>Findings by mode</h2>'
        f'<table class="matrix"><tr><th>finding</th>{head}</tr>{"".join(body)}</table>'
        '<p class="legend">✗ seen: the finding showed on that mode (in generated requests, '
        "or in sessions) · ✓: the mode ran without it · ?: not known (no bundle) · –: the mode "
        "did not run</p></section>"
    )


def _cell(oracle: str, mode: str, kinds: tuple[str, ...], ran: bool, known: bool) -> str:
    if kinds:
        how = " + ".join("session" if k == "session" else "generated" for k in kinds)
        return (
            f'<td class="hit" title="{_e(oracle)} on {_e(mode)}">✗ seen'
            f'<div class="kinds">{_e(how)}</div></td>'
        )
    if ran and not known:
        return '<td class="unk" title="its bundle names no mode">?</td>'
    if ran:
        return '<td class="ok" title="ran, not seen">✓</td>'
    return '<td class="off" title="not run">–</td>'


def _finding(f: Finding, folder: Path) -> str:
    d = f.doc
    rate = f.row.reproduced + (" (flaky)" if f.row.flaky else "")
    symptoms = "".join(
        f"<li><b>{_e(s.oracle)}</b> <code>{_e(s.signature)}</code>: {_text(s.message)}"
        f" <span class='modes'>{_e(', '.join(s.modes) or 'mode unknown')}</span></li>"
        for s in f.symptoms
    )
    link = _relative(f.bundle, folder)
    how = "".join(f"<li>{_e(what)}: <code>{_e(line)}</code></li>" for what, line in resend_lines(f))
    return (
        f'<article class="finding" id="finding-{f.number}">'
        f"<h3>#{f.number} {_e(f.row.oracle)}: {_text(f.row.message)}</h3>"
        f'<p class="meta">reproduced <b>{_e(rate)}</b> · size {f.row.size} · '
        f"{_e(f.kind)} · bundle <a href='{_e(link)}'>{_e(f.bundle)}</a></p>"
        f'<ul class="symptoms">{symptoms}</ul>'
        f"{_setup(d)}"
        f'<div class="chat">{_conversation(d)}{_answer(f)}</div>'
        f'<ul class="how">{how}</ul>'
        f"{_raw(d)}{_session(f.session)}</article>"
    )


def _relative(path: Path, folder: Path) -> str:
    try:
        return Path(os.path.relpath(path.resolve(), folder.resolve())).as_posix()
    except ValueError:
        return path.as_posix()


def _setup(doc: dict[str, Any]) -> str:
    """What the request declared beside its messages: tools and the knobs it set."""
    case = _dict(doc.get("case"))
    history = _dict(case.get("history"))
    options = _dict(case.get("options"))
    chips = []
    for tool in _list(history.get("tools")):
        tool = _dict(tool)
        name = "__".join(str(p) for p in (tool.get("namespace"), tool.get("name")) if p)
        chips.append(f'<span class="chip tool">tool {_e(name)}</span>')
    if options.get("include_tools") is False:
        chips.append('<span class="chip">tools not sent</span>')
    for key in ("tool_choice", "temperature", "max_tokens", "seed", "malformed"):
        if options.get(key) is not None:
            chips.append(f'<span class="chip">{_e(key)}: {_e(json.dumps(options[key]))}</span>')
    for key in _dict(options.get("fields")):
        chips.append(f'<span class="chip">{_e(key)}</span>')
    for form in _list(options.get("forms")):
        chips.append(f'<span class="chip">form {_e(form)}</span>')
    mode = f"{doc.get('api', '?')} · {'stream' if doc.get('stream') else 'no stream'}"
    return f'<p class="setup"><span class="chip mode">{_e(mode)}</span>{"".join(chips)}</p>'


def _conversation(doc: dict[str, Any]) -> str:
    """The minimal request's history as chat bubbles (from the dialect-neutral case), or its
    body's messages when the bundle has no case."""
    items = _list(_dict(_dict(doc.get("case")).get("history")).get("items"))
    if items:
        return "".join(_item(_dict(it)) for it in items)
    request = _dict(doc.get("request"))
    entries = _list(request.get("messages")) or _list(request.get("input"))
    if not entries:
        return _bubble("request", "request", f"<pre>{_e(_json(doc.get('request')))}</pre>")
    return "".join(_entry(_dict(e)) for e in entries)


def _item(it: dict[str, Any]) -> str:
    kind = it.get("kind")
    if kind in ("user", "system"):
        who = str(it.get("role", kind))
        return _bubble(str(kind), who, _body(it.get("text")))
    if kind == "assistant":
        parts = []
        if it.get("reasoning"):
            parts.append(f'<div class="reasoning">{_body(it["reasoning"])}</div>')
        if it.get("text"):
            parts.append(_body(it["text"]))
        parts += [_call(_dict(c)) for c in _list(it.get("tool_calls"))]
        return _bubble("assistant", "assistant", "".join(parts) or _body(None))
    if kind == "tool_result":
        head = f'<div class="for">result for {_id(str(it.get("call_id", "")))}</div>'
        return _bubble("tool", "tool", head + _body(it.get("output")))
    if kind == "reasoning":
        head = f'<div class="for">item {_id(str(it["id"]))}</div>' if it.get("id") else ""
        return _bubble("reasoning", "reasoning", head + _body(it.get("text")))
    return _bubble("foreign", str(kind or "item"), f"<pre>{_e(_json(it.get('body', it)))}</pre>")


def _entry(entry: dict[str, Any]) -> str:
    """A wire message or item, shown as it was sent (no case to read it from)."""
    who = str(entry.get("role") or entry.get("type") or "item")
    css = {"developer": "system", "function_call_output": "tool"}.get(who, who)
    return _bubble(css, who, f"<pre>{_text(_json(entry))}</pre>")


def _call(c: dict[str, Any]) -> str:
    name = "__".join(str(p) for p in (c.get("namespace"), c.get("name")) if p)
    ids = _id(str(c.get("id", "")))
    if c.get("item_id"):
        ids += f" item {_id(str(c['item_id']))}"
    return (
        f'<div class="call"><div class="callhead">call <b>{_e(name)}</b> {ids}</div>'
        f"<pre>{_e(c.get('arguments', ''))}</pre></div>"
    )


def _answer(f: Finding) -> str:
    """The failing turn: the answer observed, marked with what failed."""
    seen = _dict(f.doc.get("observed"))
    parts = []
    status = seen.get("status")
    line = [f"HTTP {status}" if status is not None else "no HTTP status"]
    for key in ("finish_reason", "response_status", "content_type"):
        if seen.get(key):
            line.append(f"{key} {seen[key]}")
    parts.append(f'<div class="status">{_e(" · ".join(line))}</div>')
    if seen.get("failure"):
        parts.append(f'<div class="error">{_text(str(seen["failure"]))}</div>')
    if seen.get("reasoning"):
        parts.append(f'<div class="reasoning">{_body(seen["reasoning"])}</div>')
    if seen.get("text"):
        parts.append(f'<div class="text">{_text(str(seen["text"]))}</div>')
    for c in _list(seen.get("tool_calls")):
        c = _dict(c)
        call = dict(c)
        if c.get("call_id") and c.get("call_id") != c.get("id"):
            call["item_id"] = c.get("id")
            call["id"] = c["call_id"]
        parts.append(_call(call))
    for err in _list(seen.get("errors")):
        err = _dict(err)
        detail = _text(str(err.get("detail", "")))
        parts.append(f'<div class="error">{_e(err.get("kind", ""))}: {detail}</div>')
    if not (seen.get("text") or seen.get("tool_calls") or seen.get("reasoning")):
        parts.append('<div class="empty">(nothing: no text, no tool call)</div>')
    evidence = f.doc.get("evidence") or seen.get("evidence")
    if evidence:
        parts.append(f'<div class="evidence">evidence: {_text(str(evidence))}</div>')
    mark = "".join(f"<b>{_e(s.oracle)}</b>: {_text(s.message)}<br>" for s in f.symptoms)
    return (
        '<div class="bubble answer failing"><div class="who">answer observed · '
        f'<span class="flag">✗ failing turn</span></div><div class="why">{mark}</div>'
        f"{''.join(parts)}</div>"
    )


def _bubble(css: str, who: str, inner: str) -> str:
    return f'<div class="bubble {_e(css)}"><div class="who">{_e(who)}</div>{inner}</div>'


def _body(text: object) -> str:
    if text is None:
        return '<div class="empty">(no text)</div>'
    if text == "":
        return '<div class="empty">(empty text "")</div>'
    return f'<div class="text">{_text(str(text))}</div>'


def _raw(doc: dict[str, Any]) -> str:
    seen = _dict(doc.get("observed"))
    answer = seen.get("body") if seen.get("body") is not None else seen.get("events")
    url = doc.get("url", "")
    return (
        f"<details><summary>exact request (POST {_e(url)})</summary>"
        f"<pre>{_text(_json(doc.get('request')))}</pre></details>"
        f"<details><summary>raw answer</summary><pre>{_text(_json(answer))}</pre></details>"
    )


def _session(turns: list[dict[str, Any]]) -> str:
    if not turns:
        return ""
    rows = []
    for t in turns:
        status = _dict(t.get("response")).get("status")
        found = "; ".join(
            f"{_dict(v).get('oracle')}: {_dict(v).get('message')}"
            for v in _list(t.get("violations"))
        )
        rows.append(
            f"<tr><td>{_e(t.get('turn', ''))}</td><td>{_e(status)}</td>"
            f"<td class='{'bad' if found else ''}'>{_text(found) or '·'}</td></tr>"
        )
    return (
        f"<details><summary>the session that found it ({len(turns)} requests)</summary>"
        "<table class='session'><tr><th>turn</th><th>status</th><th>failed</th></tr>"
        f"{''.join(rows)}</table></details>"
    )


def _turns(turns: dict[str, TurnRow]) -> str:
    """Failure rate per session turn number, as an inline SVG bar chart and its table."""
    if not turns:
        return ""
    rows = sorted(((int(n) if n.isdigit() else 0, n, r) for n, r in turns.items()))
    width, height, left, bottom, top = 720, 270, 48, 56, 24
    slot = (width - left - 10) / max(len(rows), 1)
    plot = height - bottom - top
    svg = [
        f'<svg class="plot" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        'role="img" aria-label="failure rate per session turn">'
    ]
    for pct in (0, 25, 50, 75, 100):
        y = top + plot * (1 - pct / 100)
        svg.append(
            f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" class="axis" text-anchor="end">{pct}%</text>'
        )
    for i, (_, name, row) in enumerate(rows):
        rate = row.failed / row.reached if row.reached else 0.0
        x = left + i * slot + slot * 0.15
        h = plot * rate
        y = top + plot - h
        svg.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{slot * 0.7:.1f}" height="{h:.1f}" class="bar">'
            f"<title>turn {_e(name)}: {row.failed}/{row.reached} failed</title></rect>"
            f'<text x="{x + slot * 0.35:.1f}" y="{y - 5:.1f}" class="val" '
            f'text-anchor="middle">{rate:.0%}</text>'
            f'<text x="{x + slot * 0.35:.1f}" y="{height - bottom + 16}" class="axis" '
            f'text-anchor="middle">{_e(name)}</text>'
            f'<text x="{x + slot * 0.35:.1f}" y="{height - bottom + 30}" class="n" '
            f'text-anchor="middle">n={row.reached}</text>'
        )
    svg.append(
        f'<text x="{left + (width - left) / 2:.0f}" y="{height - 2}" class="axis" '
        'text-anchor="middle">session turn (n = sessions that reached it)</text></svg>'
    )
    table = "".join(
        f"<tr><td>{_e(n)}</td><td>{r.reached}</td><td>{r.failed}</td>"
        f"<td>{(r.failed / r.reached if r.reached else 0):.0%}</td></tr>"
        for _, n, r in rows
    )
    return (
        '<section id="turns"><h2>Failure rate per session turn</h2>'
        '<p class="legend">Sessions feed the server its own answers; a bar is the share of '
        "sessions that reached a turn and failed there (last pass of each mode).</p>"
        f"{''.join(svg)}<table class='turns'><tr><th>turn</th><th>sessions reached</th>"
        f"<th>failed there</th><th>rate</th></tr>{table}</table></section>"
    )


def _coverage(run: Run) -> str:
    coverage = run.summary.coverage
    if not coverage:
        return ""
    rows = []
    for name, c in sorted(coverage.items(), key=lambda kv: (-kv[1].requests, kv[0])):
        note = "always refused" if c.always_refused else ""
        counts = "".join(
            f"<td>{n}</td>" for n in (c.requests, c.ok, c.refused, c.error, c.failed, c.slow)
        )
        css = "refused" if note else ""
        rows.append(f"<tr class='{css}'><th>{_e(name)}</th>{counts}<td>{note}</td></tr>")
    head = "".join(f"<th>{h}</th>" for h in ("requests", "2xx", "4xx", "5xx", "failed", "slow", ""))
    return (
        '<section id="coverage"><h2>Request surface coverage</h2>'
        '<p class="legend">Per dimension of the request surface: requests that used it and how '
        "the target answered. A dimension always refused is one the target does not support.</p>"
        f"<table class='coverage'><tr><th>dimension</th>{head}</tr>{''.join(rows)}</table>"
        "</section>"
    )


def _json(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)


_CSS = """
:root { --ink:#1f2328; --mute:#59636e; --line:#d1d9e0; --bad:#cf222e; --bad-bg:#ffebe9;
  --ok:#1a7f37; --ok-bg:#dafbe1; --user:#ddf4ff; --asst:#f6f8fa; --tool:#fff8c5; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
  color:var(--ink); background:#fff; }
main { max-width:1100px; margin:0 auto; padding:24px 28px 64px; }
h1 { font-size:26px; margin:0 0 8px; } h2 { font-size:20px; margin:36px 0 10px;
  border-bottom:1px solid var(--line); padding-bottom:4px; } h3 { font-size:17px; margin:0 0 6px; }
code, pre { font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; font-size:13px; }
pre { white-space:pre-wrap; word-break:break-word; margin:4px 0; }
table { border-collapse:collapse; margin:8px 0; }
th, td { border:1px solid var(--line); padding:4px 10px; text-align:left; vertical-align:top; }
td { font-variant-numeric: tabular-nums; }
.headline { font-size:17px; font-weight:600; margin:4px 0; }
.note { margin:2px 0; color:var(--bad); }
.facts th { background:#f6f8fa; font-weight:600; width:150px; }
.facts td { word-break:break-all; }
.matrix td { text-align:center; min-width:120px; vertical-align:middle; }
.matrix tr:first-child th { white-space:nowrap; }
.how { margin:6px 0; padding-left:20px; font-size:13px; } .how code { word-break:break-all; }
.matrix td.hit { background:var(--bad-bg); color:var(--bad); font-weight:600; }
.matrix td.ok { color:var(--ok); } .matrix td.unk { color:var(--mute); }
.matrix td.off { color:#aaa; background:#fafafa; }
.kinds { font-size:11px; font-weight:400; }
.sig { font-weight:400; color:var(--mute); font-size:13px; }
.legend { color:var(--mute); font-size:13px; margin:4px 0; }
.clean { color:var(--ok); font-weight:600; }
.finding { border:1px solid var(--line); border-radius:8px; padding:16px 18px; margin:16px 0;
  border-left:5px solid var(--bad); }
.meta { color:var(--mute); margin:0 0 6px; } .meta a { word-break:break-all; }
.symptoms { margin:4px 0 8px; padding-left:20px; }
.modes { color:var(--mute); font-size:13px; }
.chip { display:inline-block; border:1px solid var(--line); border-radius:12px; padding:0 9px;
  margin:2px 6px 2px 0; font-size:12px; background:#f6f8fa; }
.chip.mode { background:#0969da; color:#fff; border-color:#0969da; }
.chip.tool { background:#fbefff; }
.chat { display:flex; flex-direction:column; gap:8px; margin:10px 0; }
.bubble { max-width:78%; border:1px solid var(--line); border-radius:12px; padding:8px 12px; }
.bubble .who { font-size:11px; text-transform:uppercase; letter-spacing:.05em; color:var(--mute);
  font-weight:600; margin-bottom:2px; }
.bubble.user { align-self:flex-end; background:var(--user); border-color:#9cd0ff; }
.bubble.system { align-self:center; background:#eef1f4; max-width:90%; }
.bubble.assistant { align-self:flex-start; background:var(--asst); }
.bubble.tool { align-self:flex-start; margin-left:28px; background:var(--tool);
   border-color:#e5d57a; }
.bubble.reasoning { align-self:flex-start; background:#fff; border-style:dashed;
   font-style:italic; }
.bubble.foreign, .bubble.request { align-self:stretch; max-width:100%; background:#fafafa; }
.bubble.answer { align-self:flex-start; background:#fff; }
.bubble.failing { border:2px solid var(--bad); box-shadow:0 0 0 3px var(--bad-bg); }
.flag { color:#fff; background:var(--bad); border-radius:4px; padding:0 6px; letter-spacing:0; }
.why { color:var(--bad); font-size:13px; margin:2px 0 6px; }
.reasoning { color:var(--mute); font-style:italic; }
.empty { color:var(--mute); font-style:italic; }
.error { color:var(--bad); font-family:ui-monospace,monospace; font-size:13px; }
.evidence, .status, .for { color:var(--mute); font-size:13px; }
.call { border:1px solid var(--line); border-radius:8px; background:#fff; padding:4px 8px;
   margin:4px 0; }
.callhead { font-size:13px; }
.id { display:inline-flex; align-items:baseline; gap:4px; border-radius:4px; padding:0 4px;
  border:1px solid; white-space:nowrap; }
.id code { font-weight:600; }
.id .fam { font-size:10px; text-transform:uppercase; letter-spacing:.04em; opacity:.8; }
.g-openai { background:#dafbe1; border-color:#4ac26b; color:#116329; }
.g-vllm { background:#fff1e5; border-color:#fb8f44; color:#953800; }
.g-kimi { background:#fbefff; border-color:#c297ff; color:#6e40c9; }
.g-odd { background:#ffebe9; border-color:#ff8182; color:#a40e26; }
.g-other { background:#ddf4ff; border-color:#54aeff; color:#0550ae; }
details { margin:6px 0; } summary { cursor:pointer; color:#0969da; }
.session td.bad { color:var(--bad); }
.plot { max-width:100%; height:auto; display:block; margin:8px 0; }
.plot .grid { stroke:#e6e9ec; } .plot .bar { fill:#cf222e; opacity:.85; }
.plot .axis { font-size:12px; fill:#59636e; } .plot .val { font-size:12px; fill:#1f2328;
   font-weight:600; }
.plot .n { font-size:10px; fill:#8c959f; }
.coverage td { text-align:right; } .coverage tr.refused { color:var(--mute); background:#fafafa; }
.coverage td:last-child { text-align:left; }
"""
