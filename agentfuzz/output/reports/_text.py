"""The words every report shares: what was fuzzed, how the run went, how to re-send a finding."""

from __future__ import annotations

import json
from typing import Any

from agentfuzz.output.reports._model import FindingView, Run

__all__ = ["facts", "headline", "resend_lines"]

_RUN_KEYS = (
    ("command", "command"),
    ("seed", "seed"),
    ("profile", "profile"),
    ("agentfuzz", "agentfuzz"),
    ("version", "agentfuzz"),
)


def facts(run: Run) -> list[tuple[str, str]]:
    """What was fuzzed and how: the summary's ``run`` block, else what the first bundle's
    ``found_by`` says; the target's fields one row each."""
    about: dict[str, Any] = dict(run.about)
    for f in run.findings:
        found_by = f.doc.get("found_by")
        if isinstance(found_by, dict):
            about = {**found_by, **about}
        target = f.doc.get("target")
        if isinstance(target, dict) and "target" not in about:
            about["target"] = target
        break
    rows: list[tuple[str, str]] = []
    seen = set()
    for key, shown in _RUN_KEYS:
        if about.get(key) is not None and shown not in seen:
            rows.append((shown, _flat(about[key])))
            seen.add(shown)
    target = about.get("target")
    if isinstance(target, dict):
        rows += [(f"target {k}", _flat(v)) for k, v in target.items() if v not in (None, "", [])]
    elif target is not None:
        rows.append(("target", _flat(target)))
    return rows


def _flat(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def headline(run: Run) -> list[str]:
    """The run in one line, then one line for each way it ended early or went wrong."""
    s = run.summary
    modes = len(s.examples)
    examples = sum(s.examples.values())
    lines = [
        f"{len(s.findings)} finding(s) · {examples} examples over {modes} mode(s) · "
        f"{s.requests} requests · {s.elapsed_s:.1f}s"
    ]
    if s.not_served:
        lines.append(f"every request was answered {s.not_served}: nothing was tested")
    if s.stopped_answering:
        lines.append("the server stopped answering: the last request it answered is the repro")
    if s.interrupted:
        lines.append("interrupted: findings so far are written")
    if s.out_of_time:
        lines.append("stopped at --max-time: the last findings may not be fully shrunk")
    if s.error:
        lines.append(f"internal error: {s.error}")
    lines += [f"shard {f.shard} failed: {f.why}" for f in s.failed_shards]
    return lines


def resend_lines(f: FindingView) -> list[tuple[str, str]]:
    """What to do next with a finding, as (what, command or path), for the files its bundle
    has: the issue text to paste, the re-send, the regression test."""
    steps = []
    if (f.bundle / "REPORT.md").is_file():
        steps.append(("issue text", str(f.bundle / "REPORT.md")))
    if (f.bundle / "repro.sh").is_file():
        steps.append(("re-send", f"sh {f.bundle / 'repro.sh'}"))
    if (f.bundle / "test_repro.py").is_file():
        steps.append(("regression test", f"pytest {f.bundle / 'test_repro.py'}"))
    return steps
