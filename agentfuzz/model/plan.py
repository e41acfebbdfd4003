"""A session plan: what the client side of an agent loop does, turn by turn.

Synthetic mode sends histories the fuzzer wrote. Session mode sends histories the *server*
wrote: each turn's answer is appended and fed back. The plan decides only the client's part
of that loop: what the user asks, what each tool returns, and how the client treats the ids
the server handed out before it sends them back (the ``Policy``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agentfuzz.model.history import Api, Frozen, Tool

__all__ = ["CHAINS", "POLICIES", "RESULT_KINDS", "Chain", "Plan", "Policy", "ResultKind", "Step"]

# How the client appends one turn's answer to its history before the next request:
# - passthrough: exactly as the server returned it;
# - sanitize: ids rewritten to [A-Za-z0-9_-], as some proxies and CLIs do;
# - remint: ids replaced by fresh ``call_<uuid hex>``;
# - renumber-native: ids replaced by Kimi's native ``functions.NAME:IDX`` (one session counter);
# - drop-call: the calls are left out, their results kept (orphaned results);
# - drop-result: the calls are kept, their results never sent (orphaned calls);
# - strip-tools: appended as is, but the next request omits ``tools``.
Policy = Literal[
    "passthrough",
    "sanitize",
    "remint",
    "renumber-native",
    "drop-call",
    "drop-result",
    "strip-tools",
]
POLICIES: tuple[Policy, ...] = (
    "passthrough",
    "sanitize",
    "remint",
    "renumber-native",
    "drop-call",
    "drop-result",
    "strip-tools",
)

# What the fake tool returns: a JSON object, plain text, an error message, nothing, or a lot.
ResultKind = Literal["json", "text", "error", "empty", "large"]
RESULT_KINDS: tuple[ResultKind, ...] = ("json", "text", "error", "empty", "large")

# How a Responses turn may lean on a stored answer instead of resending the history: ``own``
# sends only what is new since the session's last answer, with ``previous_response_id`` naming
# it; ``other`` sends the same, naming an answer from another session instead.
Chain = Literal["own", "other"]
CHAINS: tuple[Chain, ...] = ("own", "other")


class Step(Frozen):
    """One request of a session and what the client does with its answer.

    ``ask`` is the tool the user message names (an index into the plan's tools, taken modulo
    their number), or None for a message naming none. A user message is added when the
    server is owed one (its last answer was text, or failed), or always when ``interject``.
    ``api``/``stream``, when set, switch the session to that api or stream mode from this turn on.
    ``fields`` and ``forms`` are this turn's request surface (``Options.fields`` and
    ``Options.forms``), drawn for the mode the session is in at this step (``surface_api``: a
    turn sent in another api, as a shrunk session that lost its switch is, sends neither: the
    fields of one api are unknown parameters to the other). ``chain`` makes a
    Responses turn lean on a stored answer (``Chain``); elsewhere, or with no answer to name
    yet, the turn resends the whole history as usual. ``relation`` pairs the turn's request
    with a related one (``agentfuzz.request.relations``) where it fits; the partner's answer is
    judged with the turn's, never appended. ``choice`` is the turn's ``tool_choice`` (a mode,
    or ``"named"``: the tool ``ask`` names), left out where None or where the turn omits tools.
    """

    ask: int | None = 0
    interject: bool = False
    result: ResultKind = "json"
    policy: Policy = "passthrough"
    api: Api | None = None
    stream: bool | None = None
    fields: dict[str, Any] = Field(default_factory=dict)
    forms: tuple[str, ...] = ()
    surface_api: Api | None = None
    chain: Chain | None = None
    relation: str | None = None
    choice: str | None = None


class Plan(Frozen):
    """A whole session: the tools declared, the api and stream mode it starts in, the steps."""

    tools: tuple[Tool, ...]
    steps: tuple[Step, ...]
    api: Api = "chat"
    stream: bool = False
