"""Oracles on whether the turn happened at all: ``empty_turn`` and ``error``."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Iterator

from agentfuzz.model.history import Case
from agentfuzz.model.observation import NOT_SERVED, Observation, Violation
from agentfuzz.oracles._common import is_answer, is_truncated, one_line, stop_requested
from agentfuzz.oracles._registry import clip, info, register
from agentfuzz.puppet.scripted import carried
from agentfuzz.request.surface import features

__all__ = ["by_needs", "by_symptom", "empty_turn", "error", "suspect"]

# How the transport says an answer went past its size limit (``transport._bounded``).
_TOO_LARGE = "ResponseTooLarge"
_ERROR_KINDS = {
    "transport": "the connection failed mid-answer",
    "http_status": "the server answered with an error status",
    "non_json": "a non-JSON body on a JSON endpoint",
    "error_frame": "the stream carried an error frame",
    "response_failed": "the response ended in response.failed",
    "no_terminal": "the stream ended without its terminal event",
}


@register(
    "empty_turn",
    expected="A 2xx answer carries visible text or at least one tool call.",
    look_for="an answer with no text and no tool call",
    rank=40,
    # A turn with nothing in it has no call: every "no call came back" complaint about it
    # says nothing more than the empty turn does.
    implies={
        "empty_turn": (
            "tool_choice:required",
            "tool_choice:named:no_call",
            "tool_choice:allowed:no_call",
        )
    },
)
def empty_turn(case: Case, obs: Observation) -> Iterator[Violation]:
    """A 2xx answer with no visible text and no tool call: the silent drop of seed 000.

    A call to a custom or hosted tool (``Observation.others``) counts as an answer.

    Reasoning alone counts as empty: the user sees nothing. A turn cut short by the token
    limit (``finish_reason: length``, Responses ``incomplete``) that shows reasoning is
    skipped, since running out of budget while thinking is the client's choice of
    ``max_tokens``. One that shows nothing at all is not: the limit says tokens were
    generated, and none reached the client (``empty_turn:truncated``). Unless the model was a
    puppet (``--puppet``): a script cut by the budget may have written only blanks or the start
    of a call, which a parser rightly holds back; ``puppet_cut`` judges those.

    Not judged on a request with stop strings: one may match before anything visible, and
    the answer ends with ``finish_reason: stop`` all the same.

    Against a real model a turn can also be empty because the model ended it at once. This
    oracle cannot tell that from a server that broke the prompt so the model had nothing to
    say; the evidence carries the completion tokens the server counted, when it says.
    """
    status = obs.exchange.status
    if not is_answer(obs) or status is None or not 200 <= status < 300:
        return
    if obs.text.strip() or obs.tool_calls or obs.others or stop_requested(case):
        return
    truncated = is_truncated(obs)
    if truncated and (obs.reasoning.strip() or carried(case.options.fields) is not None):
        return
    what = "reasoning only" if obs.reasoning.strip() else "nothing at all"
    if truncated:
        what = "nothing at all, though the token limit was reached"
    tokens = _completion_tokens(obs)
    counted = "" if tokens is None else f" completion_tokens={tokens}"
    yield Violation(
        oracle="empty_turn",
        message=f"2xx turn with no visible text and no tool call ({what})",
        evidence=clip(
            f"text={obs.text!r} reasoning={obs.reasoning[:200]!r} "
            f"finish={obs.finish_reason or obs.status!r}{counted}"
        ),
        signature="empty_turn:truncated" if truncated else "empty_turn",
    )


def _completion_tokens(obs: Observation) -> int | None:
    """The output token count the server reported (chat ``usage`` or Responses ``usage``)."""
    for payload in reversed(obs.payloads):
        if not isinstance(payload, dict):
            continue
        inner = payload.get("response")
        usage = (inner if isinstance(inner, dict) else payload).get("usage")
        if isinstance(usage, dict):
            count = usage.get("completion_tokens", usage.get("output_tokens"))
            if isinstance(count, int):
                return count
    return None


# What an error message says once what varies with the request is taken out: bracketed text
# (a validator's dump of the request), quoted text, ids and numbers; the words left say the cause.
_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
# A word: letters (dotted, as in a module path); a token with a digit or "_" in it is an id.
_WORD = re.compile(r"[a-z]{2,}(?:\.[a-z]+)*")
# Messages that name no cause: every such 5xx is one signature, refined by what its repro needs
# (Portkey answers "Something went wrong" for every fault it did not foresee).
_GENERIC = {
    "",
    "internal server error",
    "internal error",
    "error",
    "server error",
    "something went wrong",
    "an error occurred",
    "unknown error",
    "unexpected error",
    "an unexpected error occurred",
}


def _message(body: str) -> str:
    """The message of a JSON error body (``error.message``, ``message``, ``detail``), else the
    body itself."""
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        return body
    inner = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
    if isinstance(inner, dict):
        inner = inner.get("message", inner.get("detail", ""))
    return inner if isinstance(inner, str) else ""


def _cause(body: str) -> str | None:
    """A short stable digest of a 5xx's error message, so that two faults behind one status
    are two findings; None when the message names no cause (a bare "Internal Server Error")."""
    said = _message(body).lower()
    for _ in range(4):  # nested brackets, innermost first
        said = _BRACKETED.sub(" ", said)
    tokens = (t.strip(".,:;!?-") for t in _QUOTED.sub(" ", said).split())
    words = " ".join([t for t in tokens if _WORD.fullmatch(t)][:12])
    if words in _GENERIC:
        return None
    return hashlib.sha1(words.encode()).hexdigest()[:6]


@register(
    "error",
    expected="The server answers a well-formed request with a 2xx, or refuses it with a 4xx "
    "and a JSON error body; it never fails with a 5xx, cuts a stream short or stops answering.",
    look_for="a 5xx status, an error event, or a stream that ends early",
    rank=10,
    # When the server died, any of the requests in flight may have killed it, and the smallest
    # is not the likeliest: each shard's last request and each dropped answer is a suspect.
    suspects=("error:server_died", "error:transport"),
)
def error(case: Case, obs: Observation) -> Iterator[Violation]:
    """A 5xx, a non-JSON body, an SSE error frame, a stream cut short or a server gone silent.

    One violation per distinct protocol fault the assembly recorded in ``obs.errors``.
    A 5xx is signed with its status and, when its error message names a cause, a digest of that
    message with what varies per request taken out (``_cause``): one server's 500 for an
    unknown part and its 500 for a bad ``messages`` are two findings, not one. A signature that
    names a symptom alone (``by_symptom``: a bare 5xx, a dropped connection, a stream cut
    short) is refined by the run once the repro is reduced (``by_needs``).

    Overload is no fault: a 429, or a 503 with ``Retry-After``, is tried again by the transport
    within the time budget, and one that outlasts it is a slow answer, which no oracle judges.
    A redirect is not an answer (``refused``): nothing here reads it.
    """
    seen: dict[str, list[str]] = {}
    not_served = obs.exchange.status in NOT_SERVED
    cut = (obs.exchange.failure or "").startswith(_TOO_LARGE)
    for kind, detail in obs.errors:
        # A path, key or model the target does not serve: counted by the target, no finding.
        if not_served and kind == "non_json":
            continue
        # Cut at the size limit, the answer did not end: the client stopped reading it. That
        # it has no terminal event, or that the body read so far is not whole JSON, says no
        # more than the cut (``transport``) does.
        if cut and (kind == "no_terminal" or (kind == "non_json" and detail.startswith("body"))):
            continue
        seen.setdefault(kind, []).append(detail)
    for kind, details in seen.items():
        signature = f"error:{kind}"
        if kind == "http_status":
            code = obs.exchange.status or _leading_code(details[0])
            if code is not None:
                signature += f":{code}"
            cause = _cause(obs.exchange.body) if code is not None and code >= 500 else None
            if cause is not None:
                signature += f":{cause}"
        more = f" ({len(details)} times)" if len(details) > 1 else ""
        about = _ERROR_KINDS.get(kind, "protocol fault")
        if kind == "transport" and details[0].startswith(_TOO_LARGE):
            about = "the answer went on past the size limit"
        yield Violation(
            oracle="error",
            message=f"{kind}: {about}{more}: {one_line(details[0], 120)}",
            evidence=clip(details[0]),
            signature=signature,
        )


def _leading_code(detail: str) -> int | None:
    found = re.search(r"\b([1-5]\d\d)\b", detail)
    return int(found.group(1)) if found else None


# Signatures that name a symptom and no cause: a 5xx whose message names none, a connection
# dropped mid-answer, a stream cut before its terminal event. Two faults of a server look alike
# under them; a run tells them apart by what each reduced repro needs (``by_needs``).
_SYMPTOMS = re.compile(r"error:(?:http_status:5\d\d|transport|no_terminal)")
# What joins a symptom and the features its repro needs in a refined signature.
NEEDS_SEP = ":needs:"


def by_symptom(signature: str) -> bool:
    """Whether ``signature`` names a symptom alone, to be refined by what its repro needs."""
    return _SYMPTOMS.fullmatch(signature) is not None


def by_needs(violation: Violation, case: Case) -> Violation:
    """``violation`` signed by the features of ``case`` (``surface.features``), its reduced
    repro: ``error:http_status:500:needs:instructions``, ``…:needs:plain`` when the plainest
    request fails. The reducer removed everything else, so these are what the fault needs:
    two 500s that need different things are two findings. Other violations come back as
    they are."""
    if not by_symptom(violation.signature):
        return violation
    needed = "+".join(features(case)) or "plain"
    return dataclasses.replace(violation, signature=violation.signature + NEEDS_SEP + needed)


def suspect(oracle: str, signature: str) -> bool:
    """Whether a failure so signed makes its request a suspect when the server dies: its
    symptom, before what its repro needs (``by_needs``), is one of its oracle's ``suspects``."""
    about = info(oracle)
    return about is not None and signature.split(NEEDS_SEP)[0] in about.suspects
