"""Call-id shapes of the planted server, and the planted bug that refuses its own shape.

``rejects_own_ids`` copies a public report: a vLLM server serving a Mistral model mints
``chatcmpl-tool-`` + 32 hex, while the Mistral request validator accepts only 9 alphanumeric
characters, so the server answers 400 to the very history it wrote. A synthetic history can
carry that shape too, and there a 400 is a legitimate refusal; only a session, which sends the
server's own answer back unmodified, shows it as a bug (``self_rejection``).

Server-side test code: it must not import ``agentfuzz``.
"""

from __future__ import annotations

import re

from .planted_request import ParsedRequest

__all__ = ["OWN_ID", "SESSION_BUGS", "call_id_shape", "own_id_refusal"]

# Bugs only a session can show: not in ``BUGS`` (whose every bug synthetic mode must find).
SESSION_BUGS = ("rejects_own_ids",)

# vLLM's chat call id; with the bug on, the Responses ``call_id`` has this shape too.
OWN_ID = re.compile(r"chatcmpl-tool-[0-9a-f]{32}")


def call_id_shape(bugs: frozenset[str]) -> tuple[str, int]:
    """The (prefix, hex digits) of the call ids the server mints."""
    return ("chatcmpl-tool-", 32) if "rejects_own_ids" in bugs else ("call_", 24)


def own_id_refusal(req: ParsedRequest, bugs: frozenset[str]) -> str | None:
    """The 400 message for a history that carries a call id of the server's own shape, if any.

    Both places an id travels count: a call in an assistant turn and a tool result's id.
    """
    if "rejects_own_ids" not in bugs:
        return None
    carried = [c.id for e in req.entries for c in e.calls]
    carried += [e.call_id for e in req.entries if e.kind == "tool"]
    for call_id in carried:
        if OWN_ID.fullmatch(call_id):
            return f"Tool call id was {call_id} but must be a-z, A-Z, 0-9, with a length of 9."
    return None
