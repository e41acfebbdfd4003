"""The agent loop of session mode: send, check, run the fake tools, feed the answer back.

A synthetic history can only guess what a server writes; a session sends the server's own
answers back to it, turn after turn, under the client ID policy the ``Plan`` picks for each
turn. That is where the seed bugs live: an id the server minted poisons a later turn (seed
000), a proxy's sanitized ids make the parser raise (seed 001).

``run_session`` does no I/O itself: the engine hands it ``send`` (a live target) and ``check``
(the oracles), so the loop is the same against a live server and in tests.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentfuzz.model.history import (
    Api,
    AssistantMessage,
    Case,
    History,
    Item,
    Options,
    Provenance,
    ReasoningItem,
    ToolCall,
    ToolResult,
    UserMessage,
)
from agentfuzz.model.observation import Observation, ObservedCall, Violation
from agentfuzz.model.plan import Chain, Plan, ResultKind, Step
from agentfuzz.puppet.scripted import FIELD
from agentfuzz.request.policies import rewrite_calls
from agentfuzz.request.relations import prepared

__all__ = ["Turn", "fake_result", "run_session", "user_text"]


@dataclass(frozen=True)
class Turn:
    """One request of a session, what came back, and what the oracles made of it.

    ``number`` is the step's, from 1; a turn sent again without its refused fields shares it.
    """

    number: int
    case: Case
    observation: Observation
    violations: tuple[Violation, ...]


def user_text(step: Step, plan: Plan) -> str:
    """The user message of ``step``: it names the tool to use, as a user of an agent would."""
    if step.ask is None or not plan.tools:
        return "Thanks. What else can you tell me?"
    tool = plan.tools[step.ask % len(plan.tools)]
    return f"Use {tool.flat_name}."


def fake_result(kind: ResultKind, call: ToolCall, turn: int) -> str:
    """What the fake tool returns for ``call`` in turn ``turn``."""
    if kind == "text":
        return f"{call.flat_name} finished: sunny, 21 degrees."
    if kind == "error":
        return f"Error: {call.flat_name} failed: permission denied"
    if kind == "empty":
        return ""
    rows = 200 if kind == "large" else 1
    payload = {"ok": True, "tool": call.flat_name, "turn": turn}
    if rows > 1:
        payload["rows"] = [{"n": n, "value": f"row {n} of {rows}"} for n in range(rows)]
    return json.dumps(payload)


def _answered(obs: Observation) -> bool:
    """Whether the turn produced an answer a client would append to its history.

    Not an answer cut by its token budget that holds calls: the last of them may be half
    written, and a client cannot run it (nor may it blame the server for refusing it later).
    """
    status = obs.exchange.status
    if status is None or not 200 <= status < 300 or obs.errors or obs.refused:
        return False
    cut = obs.finish_reason == "length" or obs.status == "incomplete"
    if cut and obs.tool_calls:
        return False
    return bool(obs.text.strip() or obs.tool_calls)


def _as_call(call: ObservedCall, api: str) -> ToolCall:
    # Chat carries the call id as ``id``; Responses as ``call_id``, beside the item id.
    if api == "responses":
        return ToolCall(
            id=call.call_id or "",
            name=call.name or "",
            namespace=call.namespace,
            arguments=call.arguments,
            item_id=call.id,
        )
    return ToolCall(id=call.id or "", name=call.name or "", arguments=call.arguments)


def _chain(step: Step) -> Chain | None:
    """What the step's turn chains onto: its own ``chain``, or the session's own answer for the
    chain relation, which pairs a turn chained so."""
    return step.chain or ("own" if step.relation == "chain" else None)


def _chained(
    step: Step, api: str, items: list[Item], since: int, own: str | None, elsewhere: str | None
) -> tuple[tuple[Item, ...], dict[str, Any]]:
    """What a turn sends (``Step.chain``): the items after the answer it leans on and its
    surface fields naming that answer, or the whole history and the step's own fields."""
    if step.surface_api not in (None, api):
        return tuple(items), {}
    fields = dict(step.fields)
    chain = _chain(step)
    ref = (own if chain == "own" else elsewhere) if chain and api == "responses" else None
    if ref is None or not items[since:]:
        return tuple(items), fields
    return tuple(items[since:]), fields | {"previous_response_id": ref}


@dataclass
class _Loop:
    """What a session carries from one turn to the next."""

    items: list[Item] = field(default_factory=list)
    last_id: str | None = None  # the id of the last Responses answer appended
    since: int = 0  # where the items after that answer begin
    stored: bool = False  # items[:since] is exactly what the server stored under last_id
    untouched: bool = True  # every assistant item so far is the server's own, unmodified
    echoed: tuple[str, ...] = ()
    owed_user: bool = True  # the server's last word was text or a failure: the user speaks next
    omit_tools: bool = False
    calls_so_far: int = 0


def run_session(
    plan: Plan,
    send: Callable[[Case], Observation],
    check: Callable[[Case, Observation], list[Violation]],
    on_turn: Callable[[Turn], None] = lambda _: None,
    elsewhere: str | None = None,
) -> list[Turn]:
    """Run ``plan`` to its end and return every turn, in order.

    The loop goes on after a failed turn (nothing is appended, the next step asks again), so
    a session measures how each turn fares, not only the first failure. A turn that carries
    surface fields or forms and is refused (a JSON 4xx) is sent again without them, as the
    whole history, under the same number. ``elsewhere`` is a Responses answer's id from
    another session, for the steps that chain onto one.
    """
    loop = _Loop()
    turns: list[Turn] = []
    api, stream = plan.api, plan.stream

    def sent(case: Case, number: int) -> Observation:
        obs = send(case)
        turn = Turn(number, case, obs, tuple(check(case, obs)))
        turns.append(turn)
        on_turn(turn)
        return obs

    for number, step in enumerate(plan.steps, start=1):
        api = step.api or api
        stream = stream if step.stream is None else step.stream
        plain, case = _cases(plan, step, number, loop, (api, stream, elsewhere))
        obs = sent(case, number)
        answered = case
        if obs.refused and case is not plain:
            # What a client does with a field its server refuses: the same turn without it.
            # The session oracles judge this one by its history alone.
            answered = plain
            obs = sent(plain, number)
        _take_answer(loop, step, number, answered, obs)
    return turns


def _cases(
    plan: Plan, step: Step, number: int, loop: _Loop, mode: tuple[Api, bool, str | None]
) -> tuple[Case, Case]:
    """The turn's plain case (the whole history, no surface fields nor forms, a puppet script
    kept) and the case it sends (``mode`` is its api, its stream flag and the ``elsewhere``
    answer id). A relation that changes the history changes ``loop.items`` too."""
    api, stream, elsewhere = mode
    items = loop.items
    if loop.owed_user or step.interject:
        items.append(UserMessage(text=user_text(step, plan)))
    sent, fields = _chained(step, api, items, loop.since, loop.last_id, elsewhere)
    own_chain = len(sent) != len(items) and _chain(step) == "own"
    context = tuple(items[: loop.since]) if own_chain and loop.stored else ()
    origin = Provenance(turn=number, untouched=loop.untouched, echoed=loop.echoed, context=context)
    choice = _choice(step, plan, loop.omit_tools)
    # A puppet script is what the model writes, not a field a server may refuse: kept plain.
    script = {FIELD: step.fields[FIELD]} if FIELD in step.fields else {}
    plain = Case(
        history=History(tools=plan.tools, items=tuple(items)),
        options=Options(include_tools=not loop.omit_tools, tool_choice=choice, fields=script),
        api=api,
        stream=stream,
        session=origin,
    )
    if step.relation not in (None, "chain"):  # chain pairs the chained case, below
        plain = _paired(step.relation, plain, chained=len(sent) != len(items))
        if plain.history.items != tuple(items):
            items[:] = sent = plain.history.items
    case = plain
    forms = step.forms if step.surface_api in (None, api) else ()
    if set(fields) - set(script) or forms:
        given = plain.options.fields | fields
        options = plain.options.model_copy(update={"fields": given, "forms": forms})
        history = plain.history.model_copy(update={"items": sent})
        case = plain.model_copy(update={"options": options, "history": history})
    if step.relation == "chain":
        case = prepared("chain", case) or case
    return plain, case


def _take_answer(loop: _Loop, step: Step, number: int, answered: Case, obs: Observation) -> None:
    """Carry the turn's answer into ``loop`` as the client would: appended under the step's
    ID policy, with the fake tools' results, or nothing when there is no answer to take."""
    items = loop.items
    # Sent whole, chained onto nothing: what the server stored is what the client holds.
    whole = answered.history.items == tuple(items)
    whole = whole and not answered.options.fields.get("previous_response_id")
    loop.omit_tools = step.policy == "strip-tools"
    loop.echoed = ()
    if not _answered(obs):
        loop.owed_user = True
        return
    returned = tuple(_as_call(c, obs.api) for c in obs.tool_calls)
    calls = rewrite_calls(step.policy, returned, loop.calls_so_far)
    loop.calls_so_far += len(calls)
    dropped = bool(returned) and step.policy in ("drop-call", "drop-result")
    # A call that came back without an id goes back with one the client made up ("").
    made_up = any(not c.id for c in returned)
    modified = calls != returned or dropped or made_up
    loop.untouched = loop.untouched and not modified
    kept = () if step.policy == "drop-call" else calls
    own_ids = _take_back(items, obs, kept)
    loop.untouched = loop.untouched and own_ids
    if obs.api == "responses" and obs.response_id:
        # What the server stored: the conversation the request stood for, and the answer.
        stood_for = whole or bool(answered.session and answered.session.context)
        exact = not answered.options.forms and not modified and _taken_whole(obs)
        loop.last_id, loop.since, loop.stored = obs.response_id, len(items), stood_for and exact
    if calls and step.policy != "drop-result":
        items.extend(
            ToolResult(call_id=c.id, output=fake_result(step.result, c, number)) for c in calls
        )
        if kept:
            loop.echoed = tuple(c.id for c, r in zip(calls, returned, strict=True) if c.id == r.id)
        loop.owed_user = False
    else:
        loop.owed_user = True


def _choice(step: Step, plan: Plan, omit_tools: bool) -> str | None:
    """The turn's ``tool_choice`` (``Step.choice``): none without tools; ``named`` is the tool
    the user message asks for, else the first."""
    if step.choice is None or omit_tools or not plan.tools:
        return None
    if step.choice != "named":
        return step.choice
    return plan.tools[(step.ask or 0) % len(plan.tools)].flat_name


def _paired(relation: str, case: Case, chained: bool) -> Case:
    """``case`` prepared for ``relation`` where it fits (``relations.prepared``), else as it is.

    A relation that changes the history (the message asking for two tools, a special token)
    is taken only while the turn sends its whole history, and its items are the session's
    from then on: a chained turn's stored answer could not hold the change.
    """
    fitted = prepared(relation, case)
    if fitted is None:
        return case
    if chained and fitted.history.items != case.history.items:
        return case
    return fitted


# The order a client writes an answer back in (``_take_back`` and the Responses dialect):
# its reasoning, its text, its calls.
_ORDER = {"reasoning": 0, "message": 1, "function_call": 2}


def _taken_whole(obs: Observation) -> bool:
    """Whether the client's copy of a Responses answer holds exactly what the server gave: at
    most one reasoning item and one message, then the calls, in that order, nothing else, and
    no text or reasoning the client leaves out for being blank."""
    kinds = list(obs.output_types)
    if not kinds or any(k not in _ORDER for k in kinds):
        return False
    places = [_ORDER[k] for k in kinds]
    if places != sorted(places) or kinds.count("reasoning") > 1 or kinds.count("message") > 1:
        return False
    if ("message" in kinds) != bool(obs.text.strip()):
        return False
    return ("reasoning" in kinds) == bool(obs.reasoning.strip())


def _take_back(items: list[Item], obs: Observation, kept: tuple[ToolCall, ...]) -> bool:
    """Append the server's answer to ``items`` as the client sends it back (its reasoning, its
    text and the calls ``kept``); False when an id in it was made up by the client."""
    own_ids = True
    text = obs.text if obs.text.strip() else None
    reasoning = obs.reasoning if obs.reasoning.strip() else None
    if reasoning is not None and obs.api == "responses":
        # Its own item, under the server's id: an id the client made up is not passthrough.
        own_ids = obs.reasoning_id is not None
        items.append(ReasoningItem(text=reasoning, id=obs.reasoning_id))
        reasoning = None
    if kept or text is not None:
        items.append(AssistantMessage(text=text, reasoning=reasoning, tool_calls=kept))
    return own_ids
