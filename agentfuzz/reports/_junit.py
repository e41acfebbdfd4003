"""``--junit-xml FILE``: the run as JUnit XML, the format CI dashboards (Jenkins, GitLab,
GitHub test reporters) read: one test case per mode that ran (passed when no finding was
seen on it), one failed test case per finding, and one errored test case when the run itself
broke or tested nothing. Test case names are stable across runs (a mode's label, a finding's
signature) so a dashboard can follow them.
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path

from agentfuzz.model.files import write_atomically
from agentfuzz.reports._model import Run
from agentfuzz.reports._text import facts, resend_lines

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
    failures = errors = 0
    for mode in run.modes_run:
        case = _case(suite, "agentfuzz.mode", mode)
        seen = [f for f in run.findings if f.seen_on(mode)]
        if seen:
            failures += 1
            names = ", ".join(f"#{f.number} {f.row.oracle}" for f in seen)
            _failure(case, f"{len(seen)} finding(s) on {mode}: {names}", "agentfuzz.mode", "")
    for f in run.findings:
        case = _case(suite, f"agentfuzz.finding.{f.row.oracle}", f.row.signature)
        evidence = f.doc.get("evidence")
        body = [
            f"reproduced: {f.row.reproduced}{' (flaky)' if f.row.flaky else ''}",
            f"seen on: {', '.join(sorted({m for s in f.symptoms for m in s.modes})) or 'unknown'}",
            f"bundle: {f.bundle}",
            *(f"{what}: {line}" for what, line in resend_lines(f)),
            *(f"symptom {s.oracle}: {s.message}" for s in f.symptoms),
        ]
        if evidence:
            body.insert(0, f"evidence: {evidence}")
        failures += 1
        _failure(case, f"{f.row.oracle}: {f.row.message}", f.row.oracle, "\n".join(body))
    broke = _broke(run)
    if broke:
        errors += 1
        case = _case(suite, "agentfuzz.run", "run")
        ET.SubElement(case, "error", message=_x(broke), type="agentfuzz.run").text = _x(broke)
    counts = (len(suite.findall("testcase")), failures, errors)
    for key, count in zip(("tests", "failures", "errors"), counts, strict=True):
        suite.set(key, str(count))
    suite.set("skipped", "0")
    suite.set("time", f"{s.elapsed_s:.3f}")
    root = ET.Element("testsuites", name="agentfuzz", time=f"{s.elapsed_s:.3f}")
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, suite.get(key, "0"))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _case(suite: ET.Element, classname: str, name: str) -> ET.Element:
    return ET.SubElement(suite, "testcase", name=_x(name), classname=_x(classname), time="0")


def _failure(case: ET.Element, message: str, kind: str, body: str) -> None:
    ET.SubElement(case, "failure", message=_x(message), type=_x(kind)).text = _x(body)


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
