"""The ``wire_schema`` oracle: every body or event must pass the openai SDK's own models.

The SDK is the strictest widely used client, so what its pydantic models reject is what
breaks real agents. Its models allow extra fields; that leniency is kept on purpose.

Two rules the models cannot express are checked too. A Responses stream's terminal event
names how the response ended, so ``response.completed`` must carry status ``completed``
(an incomplete one ends with ``response.incomplete``, a failed one with ``response.failed``).
And in a response cut by ``max_output_tokens`` the item being written when the budget ran
out, the last one, is ``incomplete``, not ``completed``. Clients that trust either take a
cut-off answer, or a call with half its arguments, for a whole one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Annotated, Any, get_args

import pydantic
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent
from pydantic_core import ErrorDetails

from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, Violation
from agentfuzz.oracles._common import one_line
from agentfuzz.oracles._registry import clip, register

__all__ = ["wire_schema"]

# The SDK marks its unions with its own discriminator annotation, which pydantic ignores;
# adding pydantic's makes event validation dispatch on "type" instead of trying every
# member (about 4x faster, and errors name one event class instead of sixty).
_STREAM_EVENT: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(
    Annotated[ResponseStreamEvent, pydantic.Field(discriminator="type")]
)
_EVENT_CLASS = {
    get_args(member.model_fields["type"].annotation)[0]: member.__name__
    for member in get_args(get_args(ResponseStreamEvent)[0])
}
_MODELS: dict[tuple[str, bool], type[pydantic.BaseModel]] = {
    ("chat", False): ChatCompletion,
    ("chat", True): ChatCompletionChunk,
    ("responses", False): Response,
}
_TAG_ERRORS = ("union_tag_invalid", "union_tag_not_found")
_TERMINAL_STATUS = {
    "response.completed": "completed",
    "response.incomplete": "incomplete",
    "response.failed": "failed",
}


def _walk(loc: Sequence[int | str], payload: Any) -> tuple[str, list[tuple[int | str, ...]]]:
    """The error's path in the payload ("choices.*.finish_reason") and the union branches on it.

    pydantic puts the tried member's name into ``loc`` when it validates a plain union; such
    a label is a string that is not a key of the input at that point.
    """
    cur, parts, branches = payload, [], []
    for i, part in enumerate(loc):
        if isinstance(part, int):
            parts.append("*")
            cur = cur[part] if isinstance(cur, list) and -len(cur) <= part < len(cur) else None
        elif isinstance(cur, dict) and part in cur:
            parts.append(part)
            cur = cur[part]
        elif isinstance(cur, dict) and i == len(loc) - 1:
            parts.append(part)  # a missing field
        else:
            branches.append(tuple(loc[: i + 1]))
    return ".".join(parts) or "<root>", branches


def _first_error(errors: list[ErrorDetails], payload: Any) -> tuple[str, str]:
    """The error that explains the rejection, as (normalized path, pydantic's message).

    Errors inside a union branch whose own ``type`` literal did not match are noise: they
    say the item is not some other kind of item. The rest name the real fault.
    """
    walked = [(_walk(e["loc"], payload), e) for e in errors]
    wrong = {
        tuple(e["loc"][:-1])
        for e in errors
        if e["type"] == "literal_error" and e["loc"] and e["loc"][-1] == "type"
    }
    relevant = [
        (path, e) for (path, branches), e in walked if not any(b in wrong for b in branches)
    ]
    if not relevant:
        # Every member refused the item's "type": the item is of no kind the SDK knows.
        path = next((p for (p, _), e in walked if p.split(".")[-1] == "type"), walked[0][0][0])
        return path, "no member of the union accepts this type"
    # A broken discriminator explains every other complaint about its object.
    path, err = next(((p, e) for p, e in relevant if p.split(".")[-1] == "type"), relevant[0])
    return path, err["msg"]


def _check_one(api: str, stream: bool, payload: Any) -> tuple[str, str, str] | None:
    """(model name, path, message) when the SDK rejects ``payload``; None when it accepts it."""
    model = _MODELS.get((api, stream))
    name = model.__name__ if model is not None else "ResponseStreamEvent"
    if not isinstance(payload, dict):
        return name, "not_an_object", f"payload is a JSON {type(payload).__name__}"
    try:
        if model is not None:
            model.model_validate(payload)
        else:
            _STREAM_EVENT.validate_python(payload)
        return None
    except pydantic.ValidationError as exc:
        errors = exc.errors(include_url=False, include_context=False, include_input=False)
    if model is None:
        tag = payload.get("type")
        if errors[0]["type"] in _TAG_ERRORS:
            return name, "type", f"unknown or missing event type {tag!r}"
        name = _EVENT_CLASS.get(tag, name) if isinstance(tag, str) else name
        # Discriminated errors start with the tag itself, which is not a key of the payload.
        errors = [{**e, "loc": e["loc"][1:]} for e in errors]
    path, message = _first_error(errors, payload)
    return name, path, message


def _terminal_mismatch(payload: Any) -> tuple[str, str, str] | None:
    """(event class, path, message) when a terminal event's response status contradicts it."""
    if not isinstance(payload, dict) or payload.get("type") not in _TERMINAL_STATUS:
        return None
    kind = payload["type"]
    response = payload.get("response")
    status = response.get("status") if isinstance(response, dict) else None
    if status is None or status == _TERMINAL_STATUS[kind]:
        return None
    named = next((e for e, s in _TERMINAL_STATUS.items() if s == status), None)
    should = f"; that status ends with {named}" if named else ""
    return _EVENT_CLASS[kind], "response.status", f"{kind} carries status {status!r}{should}"


def _cut_item_status(name: str, response: Any) -> tuple[str, str, str] | None:
    """(model, path, message) when a response cut by the token budget calls its last item done."""
    if not isinstance(response, dict) or response.get("status") != "incomplete":
        return None
    details = response.get("incomplete_details")
    output = response.get("output")
    if not isinstance(details, dict) or details.get("reason") != "max_output_tokens":
        return None
    if not isinstance(output, list) or not output or not isinstance(output[-1], dict):
        return None
    last = output[-1]
    if last.get("status") != "completed":
        return None
    what = f"the last output item ({last.get('type')}) is 'completed'"
    return name, "output.*.status", f"{what} in a response cut by max_output_tokens"


def _semantic_faults(api: str, stream: bool, payload: Any) -> list[tuple[str, str, str]]:
    """Each rule beyond the SDK's models that ``payload`` breaks."""
    if api != "responses" or not isinstance(payload, dict):
        return []
    if not stream:
        found = [_cut_item_status("Response", payload)]
    elif payload.get("type") in _TERMINAL_STATUS:
        name = _EVENT_CLASS[payload["type"]]
        found = [_terminal_mismatch(payload), _cut_item_status(name, payload.get("response"))]
    else:
        return []
    return [f for f in found if f is not None]


def _is_error_body(payload: Any) -> bool:
    return isinstance(payload, dict) and (
        payload.get("type") == "error"
        or payload.get("object") == "error"
        or payload.get("error") is not None
    )


# The SDK's chunk model knows only function calls in a delta, though its completion model
# knows custom calls: a streamed call to a declared custom tool is not the server's fault.
_CUSTOM_DELTA = "choices.*.delta.tool_calls.*.type"


def _declares_custom(case: Case) -> bool:
    return any(t.get("type") == "custom" for t in case.history.foreign_tools)


@register(
    "wire_schema",
    expected="Every body and stream event parses with the OpenAI SDK's own models.",
    look_for="a body or event the OpenAI schema does not allow",
    # An answer not of the API's shape explains whatever the other oracles then missed in it.
    rank=20,
)
def wire_schema(case: Case, obs: Observation) -> Iterator[Violation]:
    """Each parsed body or stream event must validate against the matching SDK model.

    Skipped: refusals (their error body is legitimate), answers with an HTTP error status
    (their body is the ``error`` oracle's evidence, not a completion) and reported error frames;
    and, where the request declared a custom tool, a chat chunk's call ``type`` (the SDK's
    chunk model lags its completion model there).
    """
    kinds = {kind for kind, _ in obs.errors}
    if obs.refused or "http_status" in kinds:
        return
    reported = "error_frame" in kinds
    found: dict[str, tuple[Violation, int]] = {}
    for payload in obs.payloads:
        if reported and _is_error_body(payload):
            continue
        rejected = _check_one(obs.api, obs.exchange.stream, payload)
        if rejected and rejected[1] == _CUSTOM_DELTA and _declares_custom(case):
            rejected = None
        faults = [rejected] if rejected else _semantic_faults(obs.api, obs.exchange.stream, payload)
        for name, path, message in faults:
            signature = f"wire_schema:{name}:{path}"
            if signature in found:
                first, count = found[signature]
                found[signature] = (first, count + 1)
                continue
            evidence = json.dumps(payload, ensure_ascii=False, default=repr)
            violation = Violation(
                oracle="wire_schema",
                message=f"{name} rejects {path}: {one_line(message, 120)}",
                evidence=clip(evidence),
                signature=signature,
            )
            found[signature] = (violation, 1)
    for violation, count in found.values():
        if count > 1:
            violation = Violation(
                oracle=violation.oracle,
                message=f"{violation.message} (in {count} payloads)",
                evidence=violation.evidence,
                signature=violation.signature,
            )
        yield violation
