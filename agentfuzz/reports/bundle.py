"""``REPORT.md``: a bundle as an issue a server's maintainer can read without knowing agentfuzz.

It is made from the bundle's ``repro.json`` alone (so a bundle rewritten later, with its
symptoms folded in, gets its report rewritten the same way): a title, the environment, what
was expected by the spec and what came back, how often, the minimal request, how to re-send it
and how to run it as a regression test.
"""

from __future__ import annotations

import json
from typing import Any

from agentfuzz import oracles

__all__ = ["expected", "look_for", "report_text"]


def expected(oracle: str) -> str:
    """What a correct server does, as ``oracle`` states it: the "expected" half of a report."""
    about = oracles.info(oracle)
    return about.expected if about is not None and about.expected else f"see the oracle {oracle}"


def look_for(oracle: str, message: str) -> str:
    """One line for ``repro.sh``: what in the answer shows the fault (the oracle's hint, then
    its message)."""
    hint = _hint(oracle)
    said = " ".join(message.split())[:160]
    return f"{hint} ({said})" if hint else said


def _hint(oracle: str) -> str:
    about = oracles.info(oracle)
    return about.look_for if about is not None else ""


def _mode(doc: dict[str, Any]) -> str:
    api = "/v1/responses" if doc.get("api") == "responses" else "/v1/chat/completions"
    return f"{api}, {'streaming' if doc.get('stream') else 'not streaming'}"


def _environment(doc: dict[str, Any]) -> list[str]:
    target = doc.get("target") or {}
    found = doc.get("found_by") or {}
    lines = [f"- Endpoint: `{doc.get('url', '?')}` ({_mode(doc)})"]
    if target.get("reference_profile"):
        lines.append(
            f"- Server: agentfuzz's embedded reference server, profile "
            f"`{target['reference_profile']}`"
        )
    server = [f"`{target[k]}`" for k in ("server", "version") if target.get(k)]
    if server:
        lines.append(f"- Server says: {', '.join(server)}")
    model = target.get("model") or _model(doc)
    if model:
        listed = target.get("models")
        also = f" (`/v1/models` listed {', '.join(f'`{m}`' for m in listed)})" if listed else ""
        lines.append(f"- Model: `{model}`{also}")
    if found:
        seed = found.get("seed")
        lines.append(
            f"- Found by: `{found.get('command') or 'agentfuzz'}` (agentfuzz "
            f"{found.get('agentfuzz', '?')}, fuzz profile `{found.get('profile', '?')}`, "
            f"{'a random seed' if seed is None else f'seed {seed}'})"
        )
    return lines


def _model(doc: dict[str, Any]) -> str | None:
    request = doc.get("request")
    return request.get("model") if isinstance(request, dict) else None


def _symptoms(doc: dict[str, Any]) -> list[str]:
    rows = doc.get("symptoms") or []
    if len(rows) < 2:
        return []
    lines = ["", "## Symptoms of this one cause", ""]
    lines.append("One finding, not several: the request above shows each symptom, or one of the")
    lines.append("same cause does, given with its own repro.")
    lines.append("")
    for row in rows:
        seen = ", ".join(row.get("seen_on") or []) or "?"
        own = row.get("repro")
        where = f"; its own repro: `{own}/repro.sh`" if own else ""
        lines.append(f"- `{row.get('signature')}`: {row.get('message')} (seen on {seen}{where})")
    return lines


def _how(doc: dict[str, Any]) -> list[str]:
    lines = []
    mechanism = doc.get("mechanism")
    if mechanism:
        ids = ", ".join(f"`{i}`" for i in mechanism.get("ids", []))
        lines.append(
            f"- The call ids in this request ({ids}) are ids this server minted itself, in "
            f"a {mechanism.get('minted_on')} answer during the same run: a client that sends "
            "the server's own ids back, as every agent loop does, meets this fault."
        )
    cleared = doc.get("cleared_by")
    if cleared:
        ids = ", ".join(f"`{i}`" for i in cleared.get("ids", []))
        lines.append(
            f"- The trigger is the shape of the history's call ids: with the same ids written in "
            f"the shape this server mints itself on {cleared.get('minted_on')} "
            f"(`{cleared.get('shape')}`: {ids}), the same request no longer fails."
        )
    needs = doc.get("needs") or []
    if needs:
        lines.append(
            "- This repro is not a fully valid conversation, because the fault needs it: it "
            f"needs {'; '.join(needs)}."
        )
    elif not (doc.get("case") or {}).get("options", {}).get("malformed"):
        lines.append(
            "- The request is a valid conversation by the API's rules (every call answered, "
            "every user message with text)."
        )
    else:
        lines.append("- The body is malformed on purpose: the fault is how it is refused.")
    on = doc.get("reproduces_on") or []
    if on:
        lines.append(f"- Reproduces on: {', '.join(on)}.")
    return lines


def _related(doc: dict[str, Any]) -> list[str]:
    """The requests sent right after the minimal one, when the fault lies between them."""
    lines = []
    for entry in doc.get("related") or []:
        request = entry.get("request")
        body = request if isinstance(request, str) else json.dumps(request, indent=2)
        lines += [
            "",
            f"## Sent right after it: the related request (relation `{entry.get('relation')}`)",
            "",
            "```json",
            str(body),
            "```",
        ]
    return lines


def report_text(doc: dict[str, Any], folder: str) -> str:
    """The REPORT.md of the bundle whose ``repro.json`` is ``doc``, in folder ``folder``."""
    oracle = str(doc.get("oracle", "?"))
    message = " ".join(str(doc.get("message", "")).split())
    model = (doc.get("target") or {}).get("model") or _model(doc) or "server"
    request = doc.get("request")
    body = request if isinstance(request, str) else json.dumps(request, indent=2)
    lines = [
        f"# {model}: {message} ({_mode(doc)})",
        "",
        "Found by agentfuzz, a fuzzer for multi-turn tool calling on OpenAI-compatible "
        "servers. Below is the smallest request it found that still shows the fault.",
        "",
        "## Environment",
        "",
        *_environment(doc),
        "",
        "## Expected and observed",
        "",
        f"- Expected: {expected(oracle)}",
        f"- Observed: {message}",
    ]
    if _hint(oracle):
        lines.append(f"- Look for: {_hint(oracle)}")
    if doc.get("evidence"):
        lines.append(f"- Evidence: `{' '.join(str(doc['evidence']).split())[:400]}`")
    lines.append(f"- Reproduced: {doc.get('reproduced', '?')} tries (oracle `{oracle}`)")
    lines += _how(doc)
    lines += _symptoms(doc)
    lines += [
        "",
        "## Minimal request",
        "",
        "```json",
        body,
        "```",
    ]
    lines += _related(doc)
    lines += _resend_and_regression(folder)
    return "\n".join(lines)


def _resend_and_regression(folder: str) -> list[str]:
    """How a maintainer re-sends the request, and keeps it as a regression test."""
    return [
        "",
        "## Re-send it",
        "",
        "```sh",
        f"BASE_URL=http://localhost:8000/v1 MODEL=<your model> sh {folder}/repro.sh",
        "```",
        "",
        "`repro.sh` posts the request with curl (a key, if any, from `$OPENAI_API_KEY`), "
        "prints the raw answer, and, where agentfuzz is installed, says whether the fault fired.",
        "",
        "## Regression test",
        "",
        "```sh",
        f"pytest {folder}/test_repro.py                       # offline: the recorded answer",
        f"pytest {folder}/test_repro.py --agentfuzz-base-url http://localhost:8000/v1",
        "```",
        "",
        "Offline it replays the answer recorded when the fault was found, and passes while it "
        "shows the fault. Live it re-sends the request and passes once the server is fixed.",
        "",
    ]
