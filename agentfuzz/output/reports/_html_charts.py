"""The run-wide sections of ``index.html``: what each mode sent and how fast it was answered,
the failure rate per session turn (an inline SVG chart and its table) and the request surface
coverage."""

from __future__ import annotations

from agentfuzz.model.summary import TurnRow
from agentfuzz.output.reports._html_escape import esc
from agentfuzz.output.reports._model import API_MODES, Run


def modes_table(run: Run) -> str:
    """Per api/stream mode: examples generated and in sessions, findings seen there, requests
    answered, slow answers and the seconds per answer, as the summary counts them."""
    s = run.summary
    rows = []
    for mode in API_MODES:
        latency = s.latency.get(mode)
        generated, sessions = s.examples.get(mode), s.examples.get(f"session {mode}")
        if latency is None and generated is None and sessions is None:
            continue
        found = sum(1 for f in run.findings if mode in f.modes)
        cells = [
            "–" if generated is None else str(generated),
            "–" if sessions is None else str(sessions),
            str(found),
            "–" if latency is None else str(latency.requests),
            "–" if latency is None else str(latency.timeouts),
            _seconds(None if latency is None else latency.p50_s),
            _seconds(None if latency is None else latency.p95_s),
        ]
        rows.append(f"<tr><th>{esc(mode)}</th>{''.join(f'<td>{c}</td>' for c in cells)}</tr>")
    if not rows:
        return ""
    head = "".join(
        f"<th>{h}</th>"
        for h in ("examples", "in sessions", "findings", "answers", "slow", "p50", "p95")
    )
    return (
        '<section id="modes"><h2>Modes</h2>'
        '<p class="legend">Examples generated per mode (–: not run), findings seen there, and '
        "every answer the mode got (shrinking and related requests included): how many, how "
        "many ran out of time with the server still at work (counted, never findings), and the "
        "median and 95th percentile seconds per answer.</p>"
        f"<table class='coverage'><tr><th>mode</th>{head}</tr>{''.join(rows)}</table></section>"
    )


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}s"


def turn_chart(turns: dict[str, TurnRow]) -> str:
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
            f"<title>turn {esc(name)}: {row.failed}/{row.reached} failed</title></rect>"
            f'<text x="{x + slot * 0.35:.1f}" y="{y - 5:.1f}" class="val" '
            f'text-anchor="middle">{rate:.0%}</text>'
            f'<text x="{x + slot * 0.35:.1f}" y="{height - bottom + 16}" class="axis" '
            f'text-anchor="middle">{esc(name)}</text>'
            f'<text x="{x + slot * 0.35:.1f}" y="{height - bottom + 30}" class="n" '
            f'text-anchor="middle">n={row.reached}</text>'
        )
    svg.append(
        f'<text x="{left + (width - left) / 2:.0f}" y="{height - 2}" class="axis" '
        'text-anchor="middle">session turn (n = sessions that reached it)</text></svg>'
    )
    table = "".join(
        f"<tr><td>{esc(n)}</td><td>{r.reached}</td><td>{r.failed}</td>"
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


def coverage_table(run: Run) -> str:
    """Per dimension of the request surface: how many requests used it, how the target
    answered them, and which it always refused."""
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
        rows.append(f"<tr class='{css}'><th>{esc(name)}</th>{counts}<td>{note}</td></tr>")
    head = "".join(f"<th>{h}</th>" for h in ("requests", "2xx", "4xx", "5xx", "failed", "slow", ""))
    return (
        '<section id="coverage"><h2>Request surface coverage</h2>'
        '<p class="legend">Per dimension of the request surface: requests that used it and how '
        "the target answered. A dimension always refused is one the target does not support.</p>"
        f"<table class='coverage'><tr><th>dimension</th>{head}</tr>{''.join(rows)}</table>"
        "</section>"
    )
