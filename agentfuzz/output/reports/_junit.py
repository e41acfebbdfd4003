"""``--junit-xml FILE``: the run as JUnit XML, the format CI dashboards (Jenkins, GitLab,
GitHub test reporters) read.

One failed test case per finding (a bug is one failure, however many modes showed it); one
test case per mode that ran, passed, or skipped when it generated no example (it sent nothing
of its own); one errored test case when the run itself broke or tested nothing. Test case
names are stable across runs (a mode's label, a finding's signature) so a dashboard can
follow them.

Times are what the run measured, never a guess. A finding's time is the seconds its failing
answer took (the bundle's ``observed.elapsed_s``): the run does not record when each finding
was found. A mode's time is the seconds its answers took, summed (the summary's per-mode
samples), when no other kind of example ran on the same api and stream (the run counts
seconds per api and stream, not per kind). Where a time is not known it is left out.
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path

from agentfuzz.model.files import write_atomically
from agentfuzz.output.reports._model import FindingView, Run
from agentfuzz.output.reports._text import facts, resend_lines

__all__ = ["junit_xml", "write_junit"]

# Characters XML 1.0 cannot carry at all, escaped or not: a server's answer may hold them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _x(text: object) -> str:
    return _NOT_XML.sub("\ufffd", str(text))


def write_junit(run: Run, path: Path, now: datetime | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, junit_xml(run, now))
    return path


def junit_xml(run: Run, now: datetime | None = None) -> str:
    s = run.summary
    ended = now or datetime.now(UTC)
    started = (ended - timedelta(seconds=s.elapsed_s)).strftime("%Y-%m-%dT%H:%M:%S")
    suite = ET.Element("testsuite", name="agentfuzz fuzz", timestamp=started)
    suite.set("hostname", _x(socket.gethostname()) or "localhost")
    properties = ET.SubElement(suite, "properties")
    for key, value in facts(run):
        ET.SubElement(properties, "property", name=_x(key), value=_x(value))
    skipped = sum(_mode_case(suite, run, mode) for mode in run.modes_run)
    for f in run.findings:
        _finding_case(suite, f)
    broke = _broke(run)
    if broke:
        case = _case(suite, "agentfuzz.run", "run", None)
        ET.SubElement(case, "error", message=_x(broke), type="agentfuzz.run").text = _x(broke)
    counts = (len(suite.findall("testcase")), len(run.findings), int(bool(broke)), skipped)
    for key, count in zip(("tests", "failures", "errors", "skipped"), counts, strict=True):
        suite.set(key, str(count))
    suite.set("time", f"{s.elapsed_s:.3f}")
    root = ET.Element("testsuites", name="agentfuzz", time=f"{s.elapsed_s:.3f}")
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, suite.get(key, "0"))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _mode_case(suite: ET.Element, run: Run, mode: str) -> bool:
    """A mode's test case: passed, or skipped when it sent nothing; whether it was skipped.
    Its output holds the mode's counts and latency, and the findings seen on it."""
    s = run.summary
    api_mode = mode.removeprefix("session ")
    kinds = [m for m in s.examples if m.removeprefix("session ") == api_mode]
    samples = s.samples.get(api_mode)
    seconds = sum(samples) if samples and len(kinds) == 1 else None
    case = _case(suite, "agentfuzz.mode", mode, seconds)
    examples = s.examples.get(mode, 0)
    lines = [f"{examples} examples generated"]
    latency = s.latency.get(api_mode)
    if latency is not None:
        shared = " (every kind of example)" if len(kinds) > 1 else ""
        lines.append(
            f"{api_mode} answers{shared}: {latency.requests}, {latency.timeouts} slow, "
            f"p50 {_s(latency.p50_s)}, p95 {_s(latency.p95_s)}"
        )
    if seconds is None:
        lines.append("time: not known for this mode alone, left out")
    else:
        lines.append("time: the seconds its answers took, summed")
    seen = [f"#{f.number} {f.row.oracle}" for f in run.findings if f.seen_on(mode)]
    lines.append(f"findings seen on it: {', '.join(seen) or 'none'}")
    if not examples:
        ET.SubElement(case, "skipped", message=f"{mode} generated no example: it sent nothing")
    ET.SubElement(case, "system-out").text = _x("\n".join(lines))
    return not examples


def _finding_case(suite: ET.Element, f: FindingView) -> None:
    """A finding's one failed test case, timed by its failing answer."""
    observed = f.doc.get("observed")
    elapsed = observed.get("elapsed_s") if isinstance(observed, dict) else None
    seconds = None
    if isinstance(elapsed, (int, float)) and not isinstance(elapsed, bool) and elapsed >= 0:
        seconds = float(elapsed)
    case = _case(suite, f"agentfuzz.finding.{f.row.oracle}", f.row.signature, seconds)
    timed = (
        "time: the seconds the failing answer took (when it was found is not recorded)"
        if seconds is not None
        else "time: not in its bundle, left out"
    )
    body = [
        f"reproduced: {f.row.reproduced}{' (flaky)' if f.row.flaky else ''}",
        f"seen on: {', '.join(sorted({m for s in f.symptoms for m in s.modes})) or 'unknown'}",
        f"bundle: {f.bundle}",
        *(f"{what}: {line}" for what, line in resend_lines(f)),
        *(f"symptom {s.oracle}: {s.message}" for s in f.symptoms),
        timed,
    ]
    evidence = f.doc.get("evidence")
    if evidence:
        body.insert(0, f"evidence: {evidence}")
    message, kind = f"{f.row.oracle}: {f.row.message}", f.row.oracle
    ET.SubElement(case, "failure", message=_x(message), type=_x(kind)).text = _x("\n".join(body))


def _s(value: float | None) -> str:
    return "?" if value is None else f"{value:.3f}s"


def _case(suite: ET.Element, classname: str, name: str, seconds: float | None) -> ET.Element:
    case = ET.SubElement(suite, "testcase", name=_x(name), classname=_x(classname))
    if seconds is not None:
        case.set("time", f"{seconds:.3f}")
    return case


def _broke(run: Run) -> str:
    """Why the run itself failed, or nothing tested: an error, not a finding."""
    s = run.summary
    if s.error:
        return f"internal error: {s.error}"
    if s.not_served:
        return f"every request was answered {s.not_served}: nothing was tested"
    if s.failed_shards:
        return "; ".join(f"shard {f.shard} failed: {f.why}" for f in s.failed_shards)
    if not s.examples and not s.findings:
        return "no mode ran: nothing was tested"
    return ""
