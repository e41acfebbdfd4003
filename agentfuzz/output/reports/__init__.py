"""Reports of a finished run for people and CI: ``--report html DIR``, ``--report markdown
FILE`` and ``--junit-xml FILE``. They read only the run's ``Summary`` and its bundles on disk
(``repro.json``, ``session.json``), so a report can be written for any run, merged shards
included, once its summary is.
"""

from __future__ import annotations

from pathlib import Path

from agentfuzz.model.summary import Summary
from agentfuzz.output.reports._html import write_html
from agentfuzz.output.reports._junit import write_junit
from agentfuzz.output.reports._markdown import write_markdown
from agentfuzz.output.reports._model import gather

__all__ = ["FORMATS", "unwritable", "write_reports"]

FORMATS = ("html", "markdown")


def write_reports(
    summary: Summary,
    reports: tuple[tuple[str, Path], ...] = (),
    junit: Path | None = None,
) -> list[Path]:
    """Write each ``(format, path)`` report (``html``: a folder, ``markdown``: a file) and the
    JUnit XML file, if asked for; return what was written."""
    run = gather(summary)
    written = []
    for kind, path in reports:
        if kind == "html":
            written.append(write_html(run, path))
        elif kind == "markdown":
            written.append(write_markdown(run, path))
        else:
            raise ValueError(f"unknown report format {kind!r}: one of {', '.join(FORMATS)}")
    if junit is not None:
        written.append(write_junit(run, junit))
    return written


def unwritable(reports: tuple[tuple[str, Path], ...], junit: Path | None) -> str | None:
    """Why a report could not be written where asked (one line), checked before the run so a
    long run is not wasted on a typo; None when every path looks usable."""
    asked = [(f"--report {kind}", path, kind == "html") for kind, path in reports]
    asked += [("--junit-xml", junit, False)] if junit is not None else []
    for flag, path, folder in asked:
        if folder and path.exists() and not path.is_dir():
            return f"{flag} {path}: exists and is not a folder"
        if not folder and path.is_dir():
            return f"{flag} {path}: is a folder, not a file"
        above = next((p for p in (path, *path.parents) if p.exists()), None)
        if above is not None and above != path and not above.is_dir():
            return f"{flag} {path}: {above} is not a folder"
    return None
