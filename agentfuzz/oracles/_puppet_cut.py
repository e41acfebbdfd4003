"""The ``puppet_cut`` oracle: a scripted answer that a token budget or a stop string may have cut.

With a budget (``max_tokens``, ``max_completion_tokens``, ``max_output_tokens``) or stop strings,
the model writes a prefix of its script: the client does not know the server's tokenizer, so it
cannot tell where the budget ran out, nor always whether a stop string ended the text. Two
things are settled all the same:

- ``complete``: an answer the server reports whole (chat ``finish_reason`` ``"stop"`` or
  ``"tool_calls"``, Responses ``status: "completed"``) under a budget and no stop strings holds
  exactly the script's truth (``puppet_truth``'s comparison). Either the script fitted, and
  then the truth holds, or the budget cut it, and then the answer had to say ``length`` /
  ``incomplete``: the API reference gives ``length`` whenever the request's maximum number of
  tokens was reached, calls or not, and a client reads it to know a call may be half-written.
- ``invented``: every call returned is one the model wrote, or what is left of one after the
  cut. A call named outside the script (and not a prefix of a scripted name, which a cut name
  might be), or whose arguments parse as a JSON object that no scripted call of that name can
  be cut down to, was never written: a parser that made it up. What a cut may leave of an
  argument: the keys written before the cut, each value whole or cut short (a string a prefix
  of the written one, whitespace aside; a number, list or object a prefix of its JSON, or of
  its text where the format writes values verbatim and the parser retypes them). A call cut
  inside its arguments and then closed by the parser (an XML parameter read to the end of the
  text, a healed JSON prefix) is therefore not judged: the answer says it was cut
  (``finish_reason``, ``status``, or the stop string the request named), and whether a server
  may return such a call is not settled.

Not judged: which calls come back from a cut answer (a call written whole before the cut may
be returned or, by a parser that wants the section closed, not), the text returned, ids, and
``finish_reason`` under stop strings (a stop ends a turn with ``stop``, even inside markup).
The request must otherwise let the truth stand as ``puppet_truth`` asks (``settled_request``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, ObservedCall, Violation
from agentfuzz.oracles._common import budgeted, stop_requested
from agentfuzz.oracles._puppet import differences, returned, scripted, settled_request
from agentfuzz.oracles._registry import clip, register
from agentfuzz.puppet.formats import Script

__all__ = ["puppet_cut"]


def _reported_whole(obs: Observation) -> bool:
    if obs.api == "chat":
        return obs.finish_reason in ("stop", "tool_calls")
    return obs.status == "completed"


@register(
    "puppet_cut",
    expected="A scripted answer cut by the token budget says so, and every call it returns "
    "is one the model wrote whole.",
    look_for="finish_reason / status against what the script wrote, and calls the script "
    "never holds",
    rank=36,
)
def puppet_cut(case: Case, obs: Observation) -> Iterator[Violation]:
    """A budget-cut script reported whole, or a call returned that the model never wrote."""
    found = scripted(case, obs)
    stopped = stop_requested(case)
    if found is None or not (stopped or budgeted(case)):
        return
    fmt, written, script, truth = found
    if not settled_request(case, fmt, truth):
        return
    wrote = f"the model was to write {json.dumps(written, ensure_ascii=False)}"
    evidence = clip(f"{wrote}; the server returned {returned(obs)}")
    where = f"puppet_cut:{fmt.name}"
    if not stopped and _reported_whole(obs):
        for _, message in differences(fmt, truth, obs):
            said = obs.finish_reason if obs.api == "chat" else obs.status
            yield Violation(
                oracle="puppet_cut",
                message=f"reported complete ({said}) under a token budget, yet {message}",
                evidence=evidence,
                signature=f"{where}:complete",
            )
            return
    for index, call in enumerate(obs.tool_calls):
        what = _invented(script, call)
        if what is not None:
            yield Violation(
                oracle="puppet_cut",
                message=f"call {index} {what}: the model never wrote it",
                evidence=evidence,
                signature=f"{where}:invented",
            )
            return


def _invented(script: Script, call: ObservedCall) -> str | None:
    """How ``call`` differs from every call of the script, or None when it may be one."""
    name = call.flat_name or ""
    names = {c.name for c in script.calls}
    if name not in names:
        if any(n.startswith(name) for n in names):
            return None  # a name cut short: not settled
        return f"is named {name!r}, which the script never calls"
    try:
        arguments = json.loads(call.arguments)
    except ValueError:
        return None  # cut inside its arguments: not settled
    if not isinstance(arguments, dict):
        return None
    if any(c.name == name and _cut_of(arguments, c.arguments) for c in script.calls):
        return None
    return f"to {name!r} has arguments no call of the script can be cut down to"


def _cut_of(got: object, wrote: object) -> bool:
    """Whether ``got`` may be what a cut left of the value ``wrote`` (see the module)."""
    if got == wrote:
        return True
    if isinstance(got, dict) and isinstance(wrote, dict):
        return all(k in wrote and _cut_of(v, wrote[k]) for k, v in got.items())
    if isinstance(got, list) and isinstance(wrote, list):
        return len(got) <= len(wrote) and all(map(_cut_of, got, wrote))
    if isinstance(got, str) and isinstance(wrote, str):
        return wrote.strip().startswith(got.strip())
    text = got if isinstance(got, str) else json.dumps(got, ensure_ascii=False)
    return json.dumps(wrote, ensure_ascii=False).startswith(text.strip())
