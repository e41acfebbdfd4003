"""``--report markdown FILE``: the HTML report's content as Markdown, for a CI job summary
(GitHub's ``$GITHUB_STEP_SUMMARY``, GitLab's report pages): the mode matrix, each finding with
its oracle, message, rate, bundle and how to re-send it, the session turn table and coverage.

Text from the server is escaped twice over: as HTML (job summaries render inline HTML) and as
Markdown (a ``|`` would end a table cell, a ``*`` start emphasis).
"""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path
from typing import Any

from agentfuzz.model.files import write_atomically
from agentfuzz.output.reports._ids import family
from agentfuzz.output.reports._model import API_MODES, FindingView, Run
from agentfuzz.output.reports._model import as_dict as _dict
from agentfuzz.output.reports._model import as_list as _list
from agentfuzz.output.reports._text import facts, headline, resend_lines

__all__ = ["markdown", "write_markdown"]

_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def write_markdown(run: Run, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, markdown(run))
    return path


def _md(text: object, limit: int = 400) -> str:
    """Untrusted text as inert Markdown on one line."""
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        flat = flat[:limit] + f"… ({len(flat)} chars)"
    return _SPECIAL.sub(r"\\\1", escape(flat, quote=False))


def _code(text: object) -> str:
    """A code span that no backtick in ``text`` can end (not for table cells: ``|``)."""
    flat = " ".join(str(text).split())
    ticks = "`" * (max((len(r) for r in re.findall(r"`+", flat)), default=0) + 1)
    return f"{ticks} {flat} {ticks}"


def _fence(text: str, lang: str = "") -> str:
    ticks = "`" * max(3, max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _id(value: str, api: object) -> str:
    """An id and its family, judged as an id of ``api`` (chat ids by the chat families)."""
    return f"{_code(value) if value.strip() else repr(value)} ({_md(family(value, api))})"


def markdown(run: Run) -> str:
    lines = ["# agentfuzz report", "", f"**{_md(headline(run)[0])}**", ""]
    lines += [f"- {_md(note)}" for note in headline(run)[1:]]
    rows = facts(run)
    if rows:
        lines += ["", "| run | |", "|---|---|", *(f"| {k} | {_md(v, 600)} |" for k, v in rows)]
    lines += ["", *_matrix(run), *_modes(run), "", f"## Findings ({len(run.findings)})", ""]
    if not run.findings:
        lines.append("Nothing failed.")
    for f in run.findings:
        lines += _finding(f)
    lines += _turns(run)
    lines += _coverage(run)
    return "\n".join(lines).rstrip() + "\n"


def _matrix(run: Run) -> list[str]:
    ran = run.api_modes_run
    out = [
        "## Findings by mode",
        "",
        "| finding | " + " | ".join(API_MODES) + " |",
        "|---|" + "---|" * len(API_MODES),
    ]
    for f in run.findings:
        for n, s in enumerate(f.symptoms, 1):
            cells = [_cell(s.on(m), m in ran, bool(s.modes)) for m in API_MODES]
            number = f"#{f.number}" if len(f.symptoms) == 1 else f"#{f.number}.{n}"
            out.append(f"| {number} {_md(s.oracle)}: {_md(s.message, 120)} | {' | '.join(cells)} |")
    if not run.findings:
        out.append(
            "| every oracle | " + " | ".join("✓" if m in ran else "–" for m in API_MODES) + " |"
        )
    out += ["", "✗ seen: shown on that mode · ✓: ran without it · ?: not known · –: did not run"]
    return out


def _modes(run: Run) -> list[str]:
    """Per api/stream mode: examples, findings seen there, answers, slow ones, seconds."""
    s = run.summary
    out = []
    for mode in API_MODES:
        latency = s.latency.get(mode)
        generated, sessions = s.examples.get(mode), s.examples.get(f"session {mode}")
        if latency is None and generated is None and sessions is None:
            continue
        found = sum(1 for f in run.findings if mode in f.modes)
        cells = [_count(generated), _count(sessions), str(found)]
        if latency is None:
            cells += ["–"] * 4
        else:
            cells += [str(latency.requests), str(latency.timeouts)]
            cells += [
                _count(t) if t is None else f"{t:.2f}s" for t in (latency.p50_s, latency.p95_s)
            ]
        out.append(f"| {mode} | {' | '.join(cells)} |")
    if not out:
        return []
    return [
        "",
        "| mode | examples | in sessions | findings | answers | slow | p50 | p95 |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
        *out,
    ]


def _count(value: object) -> str:
    return "–" if value is None else str(value)


def _cell(kinds: tuple[str, ...], ran: bool, known: bool) -> str:
    if kinds:
        return (
            "✗ seen ("
            + " + ".join("session" if k == "session" else "generated" for k in kinds)
            + ")"
        )
    return ("✓" if known else "?") if ran else "–"


def _finding(f: FindingView) -> list[str]:
    rate = f.row.reproduced + (" (flaky)" if f.row.flaky else "")
    out = [
        f"### #{f.number} {_md(f.row.oracle)}: {_md(f.row.message)}",
        "",
        f"- reproduced **{_md(rate)}** · size {f.row.size} · {f.kind} · "
        f"seen on {', '.join(_all_modes(f)) or 'unknown'}",
        f"- bundle: {_code(f.bundle)}",
    ]
    for what, line in resend_lines(f):
        out.append(f"- {what}: {_code(line)}")
    if len(f.symptoms) > 1 or f.symptoms[0].oracle != f.row.oracle:
        out.append("- symptoms:")
        out += [
            f"  - {_md(s.oracle)} ({', '.join(s.modes) or 'mode unknown'}): {_md(s.message)}"
            for s in f.symptoms
        ]
    conversation = _conversation(f.doc)
    if conversation:
        out += ["", "Minimal request, and the answer that failed:", "", *conversation]
    request = f.doc.get("request")
    if request is not None:
        body = request if isinstance(request, str) else json.dumps(request, indent=2)
        out += [
            "",
            "<details><summary>exact request</summary>",
            "",
            _fence(body, "" if isinstance(request, str) else "json"),
            "",
            "</details>",
        ]
    return [*out, ""]


def _all_modes(f: FindingView) -> list[str]:
    return sorted({m for s in f.symptoms for m in s.modes})


def _conversation(doc: dict[str, Any]) -> list[str]:
    api = doc.get("api")
    items = _list(_dict(_dict(doc.get("case")).get("history")).get("items"))
    out = []
    for n, it in enumerate(i for i in items if isinstance(i, dict)):
        out.append(f"{n + 1}. {_item(it, api)}")
    seen = doc.get("observed")
    if isinstance(seen, dict):
        answer = _observed(seen, api)
        out.append(f"{len(out) + 1}. **answer observed ✗ (the failing turn)**: {answer}")
    return out


def _quote(text: object) -> str:
    if text is None:
        return "_(no text)_"
    return "_(empty text)_" if text == "" else f"“{_md(text, 300)}”"


def _item(it: dict[str, Any], api: object) -> str:
    kind = it.get("kind")
    if kind in ("user", "system"):
        return f"**{_md(it.get('role', kind))}**: {_quote(it.get('text'))}"
    if kind == "assistant":
        parts = [_quote(it.get("text"))] if it.get("text") or not it.get("tool_calls") else []
        for c in it.get("tool_calls") or []:
            if isinstance(c, dict):
                parts.append(
                    f"calls {_code(c.get('name', ''))} id {_id(str(c.get('id', '')), api)}"
                )
        return "**assistant**: " + "; ".join(parts)
    if kind == "tool_result":
        call = _id(str(it.get("call_id", "")), api)
        return f"**tool** result for {call}: {_quote(it.get('output'))}"
    if kind == "reasoning":
        return f"**reasoning**: {_quote(it.get('text'))}"
    return f"**{_md(kind or 'item')}** (as sent)"


def _observed(seen: dict[str, Any], api: object) -> str:
    parts = [f"HTTP {seen.get('status')}"]
    if seen.get("finish_reason"):
        parts.append(f"finish_reason {_md(seen['finish_reason'])}")
    if seen.get("failure"):
        parts.append(f"failure: {_md(seen['failure'])}")
    if seen.get("text"):
        parts.append(f"text {_quote(seen['text'])}")
    for c in seen.get("tool_calls") or []:
        if isinstance(c, dict):
            shown = str(c.get("call_id") or c.get("id") or "")
            parts.append(f"calls {_code(c.get('name', ''))} id {_id(shown, api)}")
    for err in seen.get("errors") or []:
        if isinstance(err, dict):
            parts.append(f"{_md(err.get('kind', ''))}: {_md(err.get('detail', ''), 200)}")
    if not (seen.get("text") or seen.get("tool_calls")):
        parts.append("no text, no tool call")
    return " · ".join(parts)


def _turns(run: Run) -> list[str]:
    turns = run.summary.session_turns
    if not turns:
        return []
    out = [
        "## Session turns",
        "",
        "| turn | sessions reached | failed there | rate |",
        "|--:|--:|--:|--:|",
    ]
    for n, r in sorted(turns.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else 0):
        rate = r.failed / r.reached if r.reached else 0.0
        out.append(f"| {_md(n)} | {r.reached} | {r.failed} | {rate:.0%} |")
    return [*out, ""]


def _coverage(run: Run) -> list[str]:
    coverage = run.summary.coverage
    if not coverage:
        return []
    out = [
        "## Request surface coverage",
        "",
        "| dimension | requests | 2xx | 4xx | 5xx | failed | slow | |",
        "|---|--:|--:|--:|--:|--:|--:|---|",
    ]
    for name, c in sorted(coverage.items(), key=lambda kv: (-kv[1].requests, kv[0])):
        note = "always refused" if c.always_refused else ""
        counts = " | ".join(
            str(n) for n in (c.requests, c.ok, c.refused, c.error, c.failed, c.slow)
        )
        out.append(f"| {_md(name)} | {counts} | {note} |")
    return out
