"""``REPORT.md``: a bundle as an issue a server's maintainer can read without knowing agentfuzz.

It is made from the bundle's ``repro.json`` alone (so a bundle rewritten later, with its
symptoms folded in, gets its report rewritten the same way): a title, the environment, what
was expected by the spec and what came back, how often, the minimal request, the answer it got,
how to re-send it and how to run it as a regression test.

Where the request came from is told from ``found_by``: a fuzz run (its command and seed), a
request the proxy captured from a client (``captured``: no seed, seen once as the client got
it), and a ``reduce`` step that cut either down (``found_by.reduce``), each named.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentfuzz import oracles
from agentfuzz.puppet.channel import HEADER
from agentfuzz.puppet.scripted import carried, mimicked

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


def _found_by(doc: dict[str, Any]) -> dict[str, Any]:
    found = doc.get("found_by")
    return found if isinstance(found, dict) else {}


def _captured(doc: dict[str, Any]) -> bool:
    """Whether the request is one the proxy captured from a client (bundles written before
    ``found_by.captured`` say so only in how often it was seen)."""
    if _found_by(doc).get("captured") is True:
        return True
    return not _found_by(doc).get("reduce") and _CLIENT_GOT in str(doc.get("reproduced", ""))


# What the proxy writes as a captured failure's rate: it saw it once and sends nothing itself.
_CLIENT_GOT = "(as the client got it)"


def _provenance(doc: dict[str, Any]) -> list[str]:
    """Who found the request and, when ``agentfuzz reduce`` cut it down, who reduced it."""
    found = _found_by(doc)
    if not found:
        return []
    made = f"agentfuzz {found.get('agentfuzz', '?')}"
    if found.get("profile"):
        # The proxy fuzzes nothing: its profile only tunes the oracles.
        made += f", {'profile' if _captured(doc) else 'fuzz profile'} `{found['profile']}`"
    if "seed" in found and not _captured(doc):
        seed = found["seed"]
        made += ", a random seed" if seed is None else f", seed {seed}"
    command = found.get("command")
    if _captured(doc):
        lines = [f"- Found by: captured from a client's traffic by `{command}` ({made})"]
    elif command:
        lines = [f"- Found by: `{command}` ({made})"]
    else:
        lines = ["- Found by: a request given to `agentfuzz reduce` (no agentfuzz run found it)"]
    step = found.get("reduce")
    if isinstance(step, dict):
        lines.append(
            f"- Reduced by: `{step.get('command') or 'agentfuzz reduce'}` "
            f"(agentfuzz {step.get('agentfuzz', '?')})"
        )
    return lines


def _environment(doc: dict[str, Any]) -> list[str]:
    target = doc.get("target") or {}
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
    return lines + _provenance(doc)


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


def _which_request(doc: dict[str, Any]) -> str:
    """The request below, as the intro names it: found, captured, or cut down."""
    reduced = isinstance(_found_by(doc).get("reduce"), dict)
    if _captured(doc) and reduced:
        return (
            "a request captured from a client's traffic, cut down by `agentfuzz reduce` to "
            "the smallest request that still shows the fault"
        )
    if _captured(doc):
        return "a request captured from a client's traffic, as it was sent, that shows the fault"
    if reduced:
        return "the smallest request `agentfuzz reduce` cut it down to that still shows the fault"
    return "the smallest request it found that still shows the fault"


def _reproduced(doc: dict[str, Any]) -> str:
    """How often the fault showed, said plainly: ``3/10 tries``, or seen once as the client
    got it (the proxy sends nothing of its own), or what the bundle says."""
    said = str(doc.get("reproduced", "?"))
    if re.fullmatch(r"\d+/\d+", said):
        return f"Reproduced: {said} tries"
    if _CLIENT_GOT in said:
        return "Seen: once, as the client got it (captured, not sent again)"
    return f"Reproduced: {said}"


# How much of the answer REPORT.md quotes; repro.json and cassette.yaml hold the rest.
ANSWER_CHARS = 1500


def _answer(doc: dict[str, Any]) -> list[str]:
    """The answer the server gave to the minimal request: status, then its body (or the
    streamed events' data), cut to ``ANSWER_CHARS``."""
    seen = doc.get("observed")
    if not isinstance(seen, dict):
        return []
    status = f"HTTP {seen['status']}" if seen.get("status") is not None else "No HTTP status"
    if seen.get("content_type"):
        status += f", `{seen['content_type']}`"
    if seen.get("failure"):
        status += f"; the client saw: {' '.join(str(seen['failure']).split())[:400]}"
    lines = ["", "## Answer", "", status]
    text = _raw_answer(seen)
    if text:
        lines += ["", _fence(_cut(text, ANSWER_CHARS))]
    return lines


def _raw_answer(seen: dict[str, Any]) -> str:
    body, events = seen.get("body"), seen.get("events")
    if isinstance(body, str) and body:
        return body
    if isinstance(events, list) and events:
        return "\n".join(f"data: {e}" for e in events)
    return ""


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters: its head and its tail (where a stream's last
    events, an error frame among them, are), and how much was left out between."""
    if len(text) <= limit:
        return text
    head, tail = text[: limit * 2 // 3], text[-(limit // 3) :]
    left = len(text) - len(head) - len(tail)
    return (
        f"{head}\n… ({left} characters left out: repro.json and cassette.yaml hold more) …\n{tail}"
    )


def _fence(text: str) -> str:
    """A code block no backtick run in ``text`` can end."""
    ticks = "`" * max(3, max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    return f"{ticks}\n{text}\n{ticks}"


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
        f"servers. Below is {_which_request(doc)}.",
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
    lines.append(f"- {_reproduced(doc)} (oracle `{oracle}`)")
    lines += _how(doc)
    lines += _symptoms(doc)
    lines += _puppet(doc)
    lines += [
        "",
        "## Minimal request",
        "",
        "```json",
        body,
        "```",
    ]
    lines += _answer(doc)
    lines += _related(doc)
    lines += _resend_and_regression(folder)
    return "\n".join(lines)


def _puppet(doc: dict[str, Any]) -> list[str]:
    """For a request that scripts what the model writes (``fuzz --puppet``): how to start the
    server so the model writes it, and the text it wrote, to set beside the answer."""
    request = doc.get("request")
    found = carried(request) if isinstance(request, dict) else None
    mimic = mimicked(request) if isinstance(request, dict) else None
    if found is not None:
        fmt = found[0]
        wrote = ["What the model wrote, token for token:", "", _fence(found[2])]
    elif mimic is not None:
        fmt, script = mimic
        wrote = [
            f"What the model wrote: this, `{HEADER}` being the last match of `{script.pattern}` "
            f"in the prompt the server rendered (`{script.default}` where none), as a model "
            "imitating its history writes it:",
            "",
            _fence(script.template),
        ]
    else:
        return []
    return [
        "",
        "## The puppet model",
        "",
        "The request scripts what the model writes (`vllm_xargs`): the server must run "
        "agentfuzz's puppet processor, else the model writes what it likes. Start vLLM with it "
        f"and the `{fmt.name}` parser (docs/puppet.md):",
        "",
        "```sh",
        "env $(agentfuzz puppet vllm-args --format env) \\",
        f"  vllm serve MODEL $(agentfuzz puppet vllm-args --format args --parser {fmt.name})",
        "```",
        "",
        *wrote,
    ]


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
