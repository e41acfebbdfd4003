"""The control request that shows a session's history is what a server refuses.

A server may refuse a request for what it declares (a tool schema it cannot handle, a field)
as rightly as for its history. So before ``self_rejection`` or ``id_roundtrip`` blame the
history a turn carries, the judge sends the same request with the history cut back to its
first user message (``history_cut``). Only if that one is accepted is the history the cause;
the oracles read its answer as ``Observation.partner(HISTORY_CUT)``.
"""

from __future__ import annotations

from agentfuzz.model.history import AssistantMessage, Case, ReasoningItem, UserMessage
from agentfuzz.model.observation import Observation

__all__ = ["HISTORY_CUT", "ORACLES", "history_cut"]

# The related answer's name; ``oracles/_session.py`` reads it under the same name.
HISTORY_CUT = "history_cut"

# The oracles that read the control: it is sent only when one of them is chosen.
ORACLES = ("self_rejection", "id_roundtrip")


def history_cut(case: Case, obs: Observation) -> Case | None:
    """The control for ``case`` refused as ``obs``: the same request, its history cut back to
    its first user message; None when there is nothing to tell apart.

    Only for a session's turn refused (any status from 400) whose history holds the server's
    output after its first user message, and that asks for nothing beyond its history (a
    surface field or form is judged by the per-request oracles, not by these two).
    """
    status = obs.exchange.status
    if case.session is None or status is None or status < 400:
        return None
    opts = case.options
    if opts.fields or opts.forms or opts.malformed:
        return None
    items = case.history.items
    first = next((i for i, it in enumerate(items) if isinstance(it, UserMessage)), None)
    if first is None:
        return None
    own = (AssistantMessage, ReasoningItem)
    if not any(isinstance(it, own) for it in items[first + 1 :]):
        return None
    history = case.history.model_copy(update={"items": items[: first + 1]})
    return case.model_copy(update={"history": history, "session": None, "relation": None})
