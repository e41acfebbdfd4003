"""What every report shows, read once: the run's summary and, per finding, its bundle.

The writers (HTML, Markdown, JUnit XML) only lay out what this module gathers, so the three
always agree on which finding was seen on which mode. Bundle files are read leniently: a
field a bundle lacks (an older bundle, or one a newer agentfuzz wrote with fields this one
does not know) is left out of the report, never an error, because a report is written at
the end of a run that already found something and must not lose it over a missing key.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentfuzz.model.modes import ALL_MODES, label
from agentfuzz.model.summary import FindingRow, Summary

__all__ = ["API_MODES", "FindingView", "Run", "SymptomView", "as_dict", "as_list", "gather"]

# The matrix's columns: every api/stream combination, in the order the fuzzer runs them.
API_MODES: tuple[str, ...] = tuple(label(m) for m in ALL_MODES)

_MODE = re.compile(r"(?:(synthetic|session) )?(chat|responses)[/-](stream|no-stream)")


@dataclass(frozen=True)
class SymptomView:
    """A summary ``Symptom`` as the reports show it: one oracle's verdict on a finding's
    minimal request, and the modes it was seen on, as the summary names modes
    (``chat/stream``, ``session responses/no-stream``)."""

    oracle: str
    signature: str
    message: str
    modes: tuple[str, ...]

    def on(self, api_mode: str) -> tuple[str, ...]:
        """The kinds (``synthetic``, ``session``) it was seen on in api/stream ``api_mode``."""
        return tuple(k for k, m in map(_split, self.modes) if m == api_mode)


@dataclass(frozen=True)
class FindingView:
    """One distinct failure as the reports show it: its summary row, its bundle's
    ``repro.json`` (``{}`` when it cannot be read) and the session transcript that found it,
    if any."""

    number: int
    row: FindingRow
    bundle: Path
    doc: dict[str, Any]
    session: list[dict[str, Any]]
    symptoms: tuple[SymptomView, ...]

    @property
    def kind(self) -> str:
        """``session`` when a session found it, else ``synthetic``."""
        kinds = {k for s in self.symptoms for k, _ in map(_split, s.modes)}
        return "session" if kinds == {"session"} else "synthetic" if kinds else "unknown"

    @property
    def modes(self) -> tuple[str, ...]:
        """Every api/stream mode any of its symptoms was seen on, either kind."""
        return tuple(m for m in API_MODES if any(s.on(m) for s in self.symptoms))

    def seen_on(self, mode: str) -> bool:
        """Whether it was seen on ``mode`` as the summary names modes (``session chat/stream``)."""
        return any(_split(mode) in map(_split, s.modes) for s in self.symptoms)


@dataclass(frozen=True)
class Run:
    """A run as the reports see it."""

    summary: Summary
    findings: tuple[FindingView, ...]
    # The summary's ``run`` block (command, seed, profile, version, target) when it has one.
    about: dict[str, Any]

    @property
    def modes_run(self) -> tuple[str, ...]:
        """The modes that ran, as the summary names them (``chat/stream``, ``session …``)."""
        return tuple(self.summary.examples)

    @property
    def api_modes_run(self) -> tuple[str, ...]:
        """The api/stream modes that ran, either kind, in the fuzzer's order."""
        ran = {_split(m)[1] for m in self.summary.examples} | {
            m for f in self.findings for m in f.modes
        }
        return tuple(m for m in API_MODES if m in ran)


def gather(summary: Summary) -> Run:
    """The run and each of its findings' bundles, as the reports show them."""
    findings = tuple(_finding(n, row) for n, row in enumerate(summary.findings, 1))
    about = getattr(summary, "run", None)
    return Run(summary, findings, about if isinstance(about, dict) else {})


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _finding(number: int, row: FindingRow) -> FindingView:
    bundle = Path(row.bundle)
    doc = _read(bundle / "repro.json")
    doc = doc if isinstance(doc, dict) else {}
    session = _read(bundle / "session.json")
    turns = session.get("turns") if isinstance(session, dict) else None
    turns = [t for t in turns if isinstance(t, dict)] if isinstance(turns, list) else []
    return FindingView(number, row, bundle, doc, turns, _symptoms(row, doc))


def _symptoms(row: FindingRow, doc: dict[str, Any]) -> tuple[SymptomView, ...]:
    """The symptoms the summary row lists, else those the bundle lists, else the one the row
    names, seen on the modes the row or bundle says (or the mode its request went out in)."""
    for listed in (getattr(row, "symptoms", None), doc.get("symptoms")):
        found = [s for s in map(_symptom, listed or []) if s is not None]
        if found:
            return tuple(found)
    modes = _modes(getattr(row, "seen_on", None)) or _modes(doc.get("seen_on"))
    if (
        not modes
        and doc.get("api") in ("chat", "responses")
        and isinstance(doc.get("stream"), bool)
    ):
        case = doc.get("case")
        by_session = isinstance(case, dict) and case.get("session") is not None
        kind = "session " if by_session or _has_session(row) else ""
        modes = (kind + label((doc["api"], doc["stream"])),)
    return (SymptomView(row.oracle, row.signature, row.message, modes),)


def _has_session(row: FindingRow) -> bool:
    return (Path(row.bundle) / "session.json").is_file()


def _symptom(entry: Any) -> SymptomView | None:
    if hasattr(entry, "model_dump"):
        entry = entry.model_dump()
    if not isinstance(entry, dict) or not isinstance(entry.get("oracle"), str):
        return None
    return SymptomView(
        oracle=entry["oracle"],
        signature=str(entry.get("signature", entry["oracle"])),
        message=str(entry.get("message", "")),
        modes=_modes(entry.get("seen_on", entry.get("modes"))),
    )


def _split(mode: str) -> tuple[str, str]:
    """``session chat/stream`` -> (``session``, ``chat/stream``); a bare mode is synthetic."""
    found = _MODE.fullmatch(mode.strip())
    if found is None:
        return ("unknown", mode)
    return (found.group(1) or "synthetic", f"{found.group(2)}/{found.group(3)}")


def _modes(given: Any) -> tuple[str, ...]:
    """Mode labels from a list of labels (``chat/stream``, ``session chat/stream``,
    ``chat-stream``) or of ``{"api", "stream", "kind"?}`` objects; anything else is dropped."""
    modes: list[str] = []
    for entry in given if isinstance(given, (list, tuple)) else []:
        if (
            isinstance(entry, dict)
            and entry.get("api") in ("chat", "responses")
            and isinstance(entry.get("stream"), bool)
        ):
            entry = f"{entry.get('kind') or ''} {label((entry['api'], entry['stream']))}"
        if isinstance(entry, str) and _MODE.fullmatch(entry.strip()):
            kind, api_mode = _split(entry)
            name = f"session {api_mode}" if kind == "session" else api_mode
            if name not in modes:
                modes.append(name)
    return tuple(modes)


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when a bundle holds an object there, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when a bundle holds an array there, else an empty one."""
    return value if isinstance(value, list) else []
