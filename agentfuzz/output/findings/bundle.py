"""Repro bundles on disk: ``OUT/<oracle>-<hash>/`` holding

- ``repro.json``: the failing request, what came back, the oracle and the reproduction rate;
- ``repro.sh``: the same request as ``curl``;
- ``cassette.yaml`` + ``test_repro.py``: the failing exchange as recorded, and a pytest file that
  replays it offline (the recorded oracle still fires: documents the bug) or, with
  ``--agentfuzz-base-url``, re-sends it live (the oracle no longer fires: the regression test);
- ``session.json``, for a failure a session found: every request and answer of that session;
- ``REPORT.md``: the finding as an issue for the server's tracker (``bundle_report``).

``repro.json`` also names the target (base URL, model, what the server said about itself), the
run that found it (``found_by``: command, seed, profile, version, run id), the modes it was seen
on and reproduces on, the API rules the repro still breaks because the failure needs them, and
how its call ids came about when they are the server's own. A folder another run wrote is never
overwritten: a second run's bundle of the same failure gets ``<oracle>-<hash>-2``.

A bundle is written the moment a failure is first seen and rewritten, atomically, each time a
smaller example fails the same way, so an interrupted run loses nothing. The API key never
reaches a bundle: only the request body is stored, and ``repro.sh`` reads ``$OPENAI_API_KEY``.

A run into an ``--out`` that holds an earlier run's bundles first moves them, with that run's
``summary.json`` and ``error.log``, into ``OUT/.previous/<when>/`` (``set_aside``): the bundles on
disk are the ones ``summary.json`` lists, and ``pytest OUT`` (which skips dot folders) runs
only those, while nothing found before is lost.

This module names, writes and folds the folders; ``_repro`` holds what a bundle records,
``_repro_sh`` writes ``repro.sh`` and ``_regression_test`` the text of ``test_repro.py``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentfuzz.judge.session import Turn
from agentfuzz.model.files import write_atomically
from agentfuzz.model.observation import Exchange, Violation
from agentfuzz.output.findings._regression_test import regression_test as _test_file
from agentfuzz.output.findings._repro import Repro, observed_summary, related_requests
from agentfuzz.output.findings._repro_sh import repro_sh
from agentfuzz.output.reports.bundle import report_text
from agentfuzz.reduce.validity import NEEDS
from agentfuzz.tape.codec import Recorded, write_cassette

__all__ = [
    "Repro",
    "bundle_dir",
    "claimed_dir",
    "fold_bundles",
    "observed_summary",
    "related_requests",
    "session_json",
    "set_aside",
    "write_bundle",
]


def bundle_dir(out: Path, violation: Violation, run: str | None = None) -> Path:
    """The bundle folder of a distinct failure: named by its oracle and signature, and, when
    that folder holds another run's bundle, numbered on (``-2``, ``-3``): never another's."""
    digest = hashlib.sha1("\0".join(violation.key).encode()).hexdigest()[:8]
    return claimed_dir(out, f"{violation.oracle}-{digest}", run)


def claimed_dir(out: Path, name: str, run: str | None) -> Path:
    """``out/name``, or the first ``out/name-N`` that is free or already run ``run``'s."""
    folder, number = out / name, 1
    while not _ours(folder, run):
        number += 1
        folder = out / f"{name}-{number}"
    return folder


def _ours(folder: Path, run: str | None) -> bool:
    """Whether ``folder`` is free, or holds a bundle of run ``run`` (any, when None)."""
    if not folder.exists():
        return True
    if run is None:
        return True
    try:
        doc = json.loads((folder / "repro.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    found = doc.get("found_by") if isinstance(doc, dict) else None
    return isinstance(found, dict) and found.get("run") == run


def write_bundle(out: Path, repro: Repro) -> Path:
    """Write (or overwrite) the bundle for ``repro`` and return its folder."""
    run = (repro.found_by or {}).get("run")
    folder = bundle_dir(out, repro.violation, run if isinstance(run, str) else None)
    folder.mkdir(parents=True, exist_ok=True)
    v = repro.violation
    doc = {
        "url": repro.url,
        "request": repro.request,
        "oracle": v.oracle,
        "message": v.message,
        "observed": repro.observed,
        "reproduced": repro.reproduced,
        "signature": v.signature,
        "evidence": v.evidence,
        "api": repro.case.api,
        "stream": repro.case.stream,
        "size": repro.case.history.size,
        "seen_on": list(repro.seen_on),
        "reproduces_on": list(repro.reproduces_on),
        "needs": [NEEDS.get(code, code) for code in repro.needs],
        "mechanism": repro.mechanism,
        "cleared_by": repro.cleared_by,
        "case": repro.case.model_dump(mode="json"),
        "related": related_requests(repro.observation),
        "target": repro.target,
        "found_by": repro.found_by,
    }
    write_atomically(folder / "repro.json", json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    write_atomically(folder / "repro.sh", repro_sh(repro), 0o755)
    write_atomically(folder / "REPORT.md", report_text(doc, folder.name))
    obs = repro.observation
    if obs is not None and obs.exchange.status is not None:
        about = {"target": repro.url, "kind": "repro", "api": repro.case.api}
        write_cassette(folder / "cassette.yaml", [Recorded(obs, repro.case, (v,))], about)
        write_atomically(folder / "test_repro.py", _test_file(v))
    if repro.transcript:
        write_atomically(folder / "session.json", session_json(repro.transcript))
    return folder


# Where an earlier run's bundles in the same --out go, and what of that run goes with them.
PREVIOUS = ".previous"
_RUN_FILES = ("summary.json", "error.log")


def set_aside(out: Path) -> Path | None:
    """Move the bundles an earlier run left in ``out`` (and its ``summary.json`` and
    ``error.log``) into a folder of their own, ``out/.previous/<when>``, and return it; None
    when ``out`` holds none."""
    if not out.is_dir():
        return None
    bundles = sorted(p.parent for p in out.glob("*/repro.json"))
    kept = [out / name for name in _RUN_FILES if (out / name).is_file()]
    if not bundles and not kept:
        return None
    when = time.strftime("%Y-%m-%dT%H-%M-%S")
    folder, number = out / PREVIOUS / when, 1
    while folder.exists():
        number += 1
        folder = out / PREVIOUS / f"{when}-{number}"
    folder.mkdir(parents=True)
    for path in bundles + kept:
        shutil.move(str(path), str(folder / path.name))
    return folder


def fold_bundles(
    primary: Path,
    symptoms: list[dict[str, Any]],
    others: list[Path],
    kept: Sequence[Path] = (),
) -> None:
    """One root cause, one bundle: ``primary`` lists every symptom (its ``repro.json`` and
    ``REPORT.md`` rewritten); the bundles of ``others`` (symptoms its request shows) go, and
    those of ``kept`` (shown by requests of their own) move into its ``symptoms/``."""
    for folder in kept:
        if folder != primary and (folder / "repro.json").is_file():
            inside = primary / "symptoms" / folder.name
            inside.parent.mkdir(exist_ok=True)
            shutil.rmtree(inside, ignore_errors=True)
            shutil.move(str(folder), str(inside))
    doc = json.loads((primary / "repro.json").read_text(encoding="utf-8"))
    doc["symptoms"] = symptoms
    write_atomically(primary / "repro.json", json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    write_atomically(primary / "REPORT.md", report_text(doc, primary.name))
    for folder in others:
        if folder != primary and (folder / "repro.json").is_file():
            shutil.rmtree(folder, ignore_errors=True)


def _answer(ex: Exchange) -> dict[str, Any]:
    answer: dict[str, Any] = {"status": ex.status, "content_type": ex.content_type}
    if ex.stream:
        answer["events"] = [{"event": e.event, "data": e.data} for e in ex.events]
    else:
        answer["body"] = ex.body
    if ex.failure:
        answer["failure"] = ex.failure
    return answer


def session_json(turns: Sequence[Turn]) -> str:
    """``session.json``: every turn of a session as sent and as answered, whole (what
    ``agentfuzz reduce`` and ``fuzz --seed-sessions`` read back)."""
    return json.dumps({"turns": [_turn(t) for t in turns]}, indent=2, ensure_ascii=False) + "\n"


def _turn(turn: Turn) -> dict[str, Any]:
    """One session turn as sent and as answered, whole: the transcript is the evidence."""
    ex = turn.observation.exchange
    origin = turn.case.session
    return {
        "turn": turn.number,
        "url": ex.url,
        "request": ex.request,
        "response": _answer(ex),
        "untouched": origin.untouched if origin else None,
        "violations": [{"oracle": v.oracle, "message": v.message} for v in turn.violations],
    }
