"""``--report html DIR``: one self-contained ``index.html`` (inline CSS and SVG, no script, no
network), for a person reading a run: the mode matrix, each mode's counts and latency, each
finding as the conversation it sent and the answer that failed, the failure rate per session
turn, and the coverage. Bundle paths are relative to the page's folder: the page and its
bundles travel together (a CI artifact), where the absolute paths of the machine that ran
them would point nowhere.

Every string from a bundle is escaped: request and answer bodies come from the server under
test, which may well answer with markup.

This module lays out the page and each finding's article; the conversation bubbles are in
``_html_chat``, the modes table, the per-turn chart and the coverage table in ``_html_charts``,
the escaping in ``_html_escape`` and the style sheet in ``_html_css``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agentfuzz.model.files import write_atomically
from agentfuzz.output.reports._html_charts import coverage_table, modes_table, turn_chart
from agentfuzz.output.reports._html_chat import answer, conversation
from agentfuzz.output.reports._html_css import CSS
from agentfuzz.output.reports._html_escape import as_json, esc, marked
from agentfuzz.output.reports._model import API_MODES, FindingView, Run
from agentfuzz.output.reports._model import as_dict as _dict
from agentfuzz.output.reports._model import as_list as _list
from agentfuzz.output.reports._text import facts, headline, resend_lines

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
        f"<style>{CSS}</style></head><body><main>",
        "<h1>agentfuzz report</h1>",
        _facts(run),
        _matrix(run),
        modes_table(run),
        '<section id="findings">',
        f"<h2>Findings ({len(run.findings)})</h2>",
        *(_finding(f, folder) for f in run.findings),
        "</section>" if run.findings else '<p class="clean">Nothing failed.</p></section>',
        turn_chart(run.summary.session_turns),
        coverage_table(run),
        "</main></body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _facts(run: Run) -> str:
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{marked(v)}</td></tr>" for k, v in facts(run))
    notes = "".join(f'<p class="note">{esc(line)}</p>' for line in headline(run)[1:])
    return (
        f'<p class="headline">{esc(headline(run)[0])}</p>{notes}<table class="facts">{rows}</table>'
    )


def _matrix(run: Run) -> str:
    """Oracle by api/stream: which finding was seen on which mode, and by which kind of
    example (generated, or a session); a dash where the mode did not run."""
    ran = run.api_modes_run
    head = "".join(f"<th>{esc(m)}</th>" for m in API_MODES)
    body = []
    for f in run.findings:
        for n, s in enumerate(f.symptoms, 1):
            row = "".join(_cell(s.oracle, m, s.on(m), m in ran, bool(s.modes)) for m in API_MODES)
            number = _number(f, n)
            name = f'<a href="#finding-{f.number}">{number}</a> <b>{esc(s.oracle)}</b>'
            body.append(f"<tr><th>{name}<div class='sig'>{esc(s.message)}</div></th>{row}</tr>")
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


def _number(f: FindingView, n: int) -> str:
    """A symptom's number: ``#2`` alone, ``#2.1``, ``#2.2`` for a finding with several."""
    return f"#{f.number}" if len(f.symptoms) == 1 else f"#{f.number}.{n}"


def _cell(oracle: str, mode: str, kinds: tuple[str, ...], ran: bool, known: bool) -> str:
    if kinds:
        how = " + ".join("session" if k == "session" else "generated" for k in kinds)
        return (
            f'<td class="hit" title="{esc(oracle)} on {esc(mode)}">✗ seen'
            f'<div class="kinds">{esc(how)}</div></td>'
        )
    if ran and not known:
        return '<td class="unk" title="its bundle names no mode">?</td>'
    if ran:
        return '<td class="ok" title="ran, not seen">✓</td>'
    return '<td class="off" title="not run">–</td>'


def _finding(f: FindingView, folder: Path) -> str:
    d, api = f.doc, f.doc.get("api")
    rate = f.row.reproduced + (" (flaky)" if f.row.flaky else "")
    symptoms = "".join(
        f"<li>{_number(f, n)} <b>{esc(s.oracle)}</b> <code>{esc(s.signature)}</code>: "
        f"{marked(s.message, api)}"
        f" <span class='modes'>{esc(', '.join(s.modes) or 'mode unknown')}</span></li>"
        for n, s in enumerate(f.symptoms, 1)
    )
    # Paths as seen from the report's folder: the page and its bundles move together (a CI
    # artifact), so an absolute path of the machine that ran it would point nowhere.
    link = _relative(f.bundle, folder)
    how = "".join(
        f"<li>{esc(what)}: <code>{esc(line.replace(str(f.bundle), link))}</code></li>"
        for what, line in resend_lines(f)
    )
    if how:
        how = (
            f'<ul class="how">{how}</ul><p class="legend">paths relative to this page\'s folder</p>'
        )
    return (
        f'<article class="finding" id="finding-{f.number}">'
        f"<h3>#{f.number} {esc(f.row.oracle)}: {marked(f.row.message, api)}</h3>"
        f'<p class="meta">reproduced <b>{esc(rate)}</b> · size {f.row.size} · '
        f"{esc(f.kind)} · bundle <a href='{esc(link)}'>{esc(link)}</a></p>"
        f'<ul class="symptoms">{symptoms}</ul>'
        f"{_setup(d)}"
        f'<div class="chat">{conversation(d)}{answer(f)}</div>'
        f"{how}{_raw(d)}{_session(f.session, api)}</article>"
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
        chips.append(f'<span class="chip tool">tool {esc(name)}</span>')
    if options.get("include_tools") is False:
        chips.append('<span class="chip">tools not sent</span>')
    for key in ("tool_choice", "temperature", "max_tokens", "seed", "malformed"):
        if options.get(key) is not None:
            chips.append(f'<span class="chip">{esc(key)}: {esc(json.dumps(options[key]))}</span>')
    for key in _dict(options.get("fields")):
        chips.append(f'<span class="chip">{esc(key)}</span>')
    for form in _list(options.get("forms")):
        chips.append(f'<span class="chip">form {esc(form)}</span>')
    mode = f"{doc.get('api', '?')} · {'stream' if doc.get('stream') else 'no stream'}"
    return f'<p class="setup"><span class="chip mode">{esc(mode)}</span>{"".join(chips)}</p>'


def _raw(doc: dict[str, Any]) -> str:
    seen = _dict(doc.get("observed"))
    answer = seen.get("body") if seen.get("body") is not None else seen.get("events")
    url, api = doc.get("url", ""), doc.get("api")
    return (
        f"<details><summary>exact request (POST {esc(url)})</summary>"
        f"<pre>{marked(as_json(doc.get('request')), api)}</pre></details>"
        f"<details><summary>raw answer</summary><pre>{marked(as_json(answer), api)}</pre>"
        "</details>"
    )


def _session(turns: list[dict[str, Any]], api: object) -> str:
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
            f"<tr><td>{esc(t.get('turn', ''))}</td><td>{esc(status)}</td>"
            f"<td class='{'bad' if found else ''}'>{marked(found, api) or '·'}</td></tr>"
        )
    return (
        f"<details><summary>the session that found it ({len(turns)} requests)</summary>"
        "<table class='session'><tr><th>turn</th><th>status</th><th>failed</th></tr>"
        f"{''.join(rows)}</table></details>"
    )
