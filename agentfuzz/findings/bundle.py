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
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentfuzz.judge.session import Turn
from agentfuzz.model.files import write_atomically
from agentfuzz.model.history import Case
from agentfuzz.model.observation import Exchange, Observation, Violation
from agentfuzz.reduce.validity import NEEDS
from agentfuzz.reports.bundle import look_for, report_text
from agentfuzz.tape.codec import Recorded, write_cassette

__all__ = [
    "Repro",
    "bundle_dir",
    "claimed_dir",
    "fold_bundles",
    "observed_summary",
    "related_requests",
    "session_json",
    "write_bundle",
]


@dataclass(frozen=True)
class Repro:
    """Everything a bundle holds: one failing request and what was seen when it was sent."""

    url: str
    request: dict[str, Any] | str
    case: Case
    violation: Violation
    observed: dict[str, Any]
    reproduced: str = "pending"
    transcript: tuple[Turn, ...] = field(default=())
    # The failing turn as observed: its exchange carries the recording the cassette is made of.
    observation: Observation | None = None
    # The run that found it (``config.found_by``), and a ``reduce`` step when one cut it down.
    found_by: dict[str, Any] | None = None
    # What was fuzzed: base URL, model, what /v1/models listed, the server's own word on itself.
    target: dict[str, Any] | None = None
    seen_on: tuple[str, ...] = ()
    reproduces_on: tuple[str, ...] = ()
    # ``validity.NEEDS`` codes: the rules the failure needs broken.
    needs: tuple[str, ...] = ()
    mechanism: dict[str, Any] | None = None
    # The server's own id shape that stops the failure (``explain``): the trigger is the ids.
    cleared_by: dict[str, Any] | None = None


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


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


def observed_summary(obs: Observation) -> dict[str, Any]:
    """What a maintainer needs to see of the answer, clipped so a bundle stays readable."""
    ex = obs.exchange
    return {
        "status": ex.status,
        "content_type": ex.content_type,
        "failure": ex.failure,
        "text": _clip(obs.text, 2000),
        "reasoning": _clip(obs.reasoning, 500),
        "tool_calls": [
            {
                "index": c.index,
                "id": c.id,
                "call_id": c.call_id,
                "name": c.name,
                "namespace": c.namespace,
                "arguments": _clip(c.arguments, 500),
            }
            for c in obs.tool_calls
        ],
        "finish_reason": obs.finish_reason,
        "response_status": obs.status,
        "errors": [{"kind": k, "detail": _clip(d, 500)} for k, d in obs.errors],
        "body": _clip(ex.body, 2000) if not ex.stream else None,
        "events": [_clip(e.data, 300) for e in ex.events[:200]] if ex.stream else None,
    }


def _endpoint(url: str, base_url: str | None) -> tuple[str, str]:
    """The base URL and the path after it (``/chat/completions``) of a posted URL."""
    if base_url and url.startswith(base_url.rstrip("/") + "/"):
        base = base_url.rstrip("/")
        return base, url[len(base) :]
    for path in ("/chat/completions", "/responses"):
        if url.endswith(path):
            return url[: -len(path)], path
    head, _, tail = url.rpartition("/")
    return head, "/" + tail


_CHECK = """\
if python3 -c 'import agentfuzz.tape.replay' 2>/dev/null; then
  echo "--- agentfuzz judges a fresh answer to the same request:" >&2
  python3 - "$HERE" "$BASE_URL" "$MODEL" <<'AGENTFUZZ_PY'
import sys
from pathlib import Path

from agentfuzz import resend_bundle
oracle = {oracle}
said = resend_bundle(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
found = [v for v in said if v.oracle == oracle]
if found:
    print(f"FIRED: {{oracle}}: {{found[0].message}}")
else:
    print(f"not fired: {{oracle}} (fixed, or a flaky fault: it reproduced {reproduced})")
AGENTFUZZ_PY
fi
"""


def _curl(repro: Repro) -> str:
    """``repro.sh``: the request as curl, to ``$BASE_URL`` with ``$MODEL`` (defaults: where it
    was found), then each request related to it; it says what to look for, and with agentfuzz
    installed whether it fired."""
    target = repro.target or {}
    base, path = _endpoint(repro.url, target.get("base_url"))
    request = repro.request
    model = request.get("model") if isinstance(request, dict) else None
    v = repro.violation
    lines = [
        "#!/bin/sh",
        f"# Re-send agentfuzz's minimal request for {v.oracle}: {_one_line(v.message)}",
        "# BASE_URL and MODEL default to where it was found; a key comes from $OPENAI_API_KEY.",
        f'BASE_URL="${{BASE_URL:-{_sh_default(base)}}}"',
        f'MODEL="${{MODEL:-{_sh_default(str(model or ""))}}}"',
        'HERE=$(cd "$(dirname "$0")" && pwd)',
        f"echo {shlex.quote('look for: ' + look_for(v.oracle, v.message))} >&2",
        "model=$(printf '%s' \"$MODEL\" | sed 's/[\\\\\"]/\\\\&/g')",
        *_post(path, request, repro.case.stream),
    ]
    for entry in related_requests(repro.observation):
        _, other_path = _endpoint(entry["url"], target.get("base_url"))
        lines.append(f"echo {shlex.quote(_related_line(entry['relation']))} >&2")
        lines += _post(other_path, entry["request"], entry["stream"])
    check = _CHECK.format(oracle=repr(v.oracle), reproduced=repro.reproduced)
    return "\n".join(lines) + "\n" + check


def _related_line(relation: str) -> str:
    return f"--- and right after it, the request related to it ({relation}):"


def _post(path: str, request: dict[str, Any] | str, stream: bool) -> list[str]:
    """The lines of ``repro.sh`` that post ``request`` to ``$BASE_URL`` + ``path`` (with
    ``$MODEL`` in place of its model, when it has one)."""
    flags = "-sS -N" if stream else "-sS"
    command = (
        f'curl {flags} -X POST "$BASE_URL"{shlex.quote(path)} \\\n'
        "  -H 'Content-Type: application/json' \\\n"
        '  ${OPENAI_API_KEY:+-H "Authorization: Bearer $OPENAI_API_KEY"} \\\n'
        "  --data-binary @-"
    )
    if isinstance(request, str) or "model" not in request:
        # A malformed body (or one without a model), byte for byte: $MODEL cannot apply.
        text = request if isinstance(request, str) else _json(request)
        return [f"printf %s {shlex.quote(text)} | {command}", "echo >&2"]
    rest = {k: val for k, val in request.items() if k != "model"}
    opening = 'printf \'{"model":"%s"' + ("," if rest else "") + '\' "$model"'
    return [
        f"{{ {opening}; cat <<'AGENTFUZZ_JSON'; }} | {command}",
        _json(rest)[1:] if rest else "}",
        "AGENTFUZZ_JSON",
        "echo >&2",
    ]


def related_requests(obs: Observation | None) -> list[dict[str, Any]]:
    """What a bundle records of the requests related to its failing one: for each, the
    relation, the URL, the exact body and whether it streamed (``repro.json``'s ``related``)."""
    if obs is None:
        return []
    return [
        {
            "relation": r.relation,
            "url": r.observation.exchange.url,
            "request": r.observation.exchange.request,
            "stream": r.observation.exchange.stream,
        }
        for r in obs.related
    ]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _sh_default(value: str) -> str:
    """``value`` safe inside ``"${VAR:-…}"``."""
    return "".join("\\" + ch if ch in '"$`\\}' else ch for ch in value)


def _one_line(text: str) -> str:
    return " ".join(text.split())[:200]


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
    write_atomically(folder / "repro.sh", _curl(repro), 0o755)
    write_atomically(folder / "REPORT.md", report_text(doc, folder.name))
    obs = repro.observation
    if obs is not None and obs.exchange.status is not None:
        about = {"target": repro.url, "kind": "repro", "api": repro.case.api}
        write_cassette(folder / "cassette.yaml", [Recorded(obs, repro.case, (v,))], about)
        write_atomically(folder / "test_repro.py", _test_file(v))
    if repro.transcript:
        write_atomically(folder / "session.json", session_json(repro.transcript))
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


_TEST_FILE = '''\
"""Regression test for an agentfuzz finding of ``{oracle}``.

{message}

Two modes:

- offline (plain ``pytest``): replays the failing exchange recorded in ``cassette.yaml``
  through agentfuzz's client pipeline and asserts the same fault (``SIGNATURE``) still
  shows. It documents the bug and passes in CI, without a server or network;
- live (``pytest --agentfuzz-base-url http://host:8000/v1 [--agentfuzz-model NAME]``, or
  ``$AGENTFUZZ_BASE_URL``): re-sends the minimal request in ``repro.json`` and asserts
  ``{oracle}`` no longer fires. It fails while the server has the bug and passes once
  fixed.
"""

import os
from pathlib import Path

import pytest

from agentfuzz import replay_bundle, resend_bundle
HERE = Path(__file__).parent
ORACLE = {oracle_literal}
SIGNATURE = {signature_literal}


def test_repro(request: pytest.FixtureRequest) -> None:
    base_url = request.config.getoption("agentfuzz_base_url", default=None)
    base_url = base_url or os.environ.get("AGENTFUZZ_BASE_URL")
    if not base_url:
        fired = {{v.signature for v in replay_bundle(HERE)}}
        assert SIGNATURE in fired, "the recorded exchange no longer shows the bug"
        return
    model = request.config.getoption("agentfuzz_model", default=None)
    found = [v for v in resend_bundle(HERE, base_url, model) if v.oracle == ORACLE]
    assert not found, f"{{ORACLE}} still fires: {{found[0].message}}"
'''


def _test_file(v: Violation) -> str:
    # The message goes into a docstring: no quotes or backslashes, wrapped to the line limit.
    message = " ".join(v.message.split()).replace('"', "'").replace("\\", "/")
    wrapped = textwrap.fill(message[:300], 96, break_long_words=True)
    # json.dumps writes the double-quoted literal the formatter would.
    return _TEST_FILE.format(
        oracle=v.oracle,
        oracle_literal=json.dumps(v.oracle),
        signature_literal=json.dumps(v.signature),
        message=wrapped,
    )
