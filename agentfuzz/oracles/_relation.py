"""``relation``: two answers to related requests that do not relate as the spec says they must.

The judge sends a case's partner (``request.relations``) right after it; the partner's answer
rides on the case's observation (``Observation.related``). One signature per relation,
``relation:<name>``; each judges only two normal 2xx answers, and says nothing otherwise.

Prompt relations read the prompt's size the server reports (chat ``usage.prompt_tokens``,
Responses ``usage.input_tokens``), which no sampling changes:

- ``tools``: with and without the tools, the same size: the tools never reached the prompt.
- ``system``: a long system message first, and the prompt did not grow.
- ``tool_result``: one tool result made longer, and the prompt did not grow: the result was cut
  or dropped before the template.
- ``text_part``: text as one text part and as a string, sizes that differ: the server renders
  the part otherwise than the same text.
- ``chain``: a Responses request chained onto its session's own last answer
  (``previous_response_id``) and the same conversation sent whole, sizes that differ: the
  server's stored context lost, added or changed something (its output items, the earlier
  input, or an earlier request's ``instructions``, which the spec says are not carried over).
  Judged only where the session vouches that the client's copy of the conversation is exactly
  what the server stored: every answer in it taken back whole, in the order the server gave
  its items, with no message forms (``Provenance.context``).
- ``special_token``: special-token spellings in user text cost more than one token fewer each
  than their near misses (one character left out). As text each spelling costs four tokens or
  more and its near miss within one of that, so saving more than one per spelling means some
  became control tokens. A server that reads only a few of many spellings as control tokens
  can be missed. Where a server counts only the prompt tokens it did not have cached, these
  figures say nothing and the profile turns prompt relations off.

Greedy relations read what the model wrote, at temperature 0 only; the judge re-sends a pair
that disagrees and keeps the finding only if each side repeats itself (``steady``):

- ``choice_auto``: ``tool_choice`` left out and ``"auto"``, beside tools, answered with different
  kinds of turn (calls, text, nothing): the spec makes them the same request.
- ``required_calls``: ``"required"`` answered with fewer calls than ``"auto"`` on a message
  asking for two tools. A model may write differently under a forced format (vLLM constrains a
  required call to a JSON list), so on such a target this tells little about the server, and
  its profile turns it off.

The ``stream`` relation is judged by ``stream_divergence``.
"""

from __future__ import annotations

from collections.abc import Iterator

from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, Violation
from agentfuzz.oracles._common import integer, is_cut, usages
from agentfuzz.oracles._compare import deterministic, difference, served, shape, side
from agentfuzz.oracles._registry import register
from agentfuzz.request.relations import EXTRA_RESULT, RELATIONS, special_count

__all__ = ["prompt_size", "relation", "relation_of", "steady"]

# The relations this oracle judges: all but ``stream``, which is ``stream_divergence``'s.
_JUDGED = tuple(name for name in RELATIONS if name != "stream")


def prompt_size(obs: Observation) -> int | None:
    """The prompt's size in tokens the answer reports (its last usage that says it)."""
    found = None
    for usage in usages(obs):
        size = integer(usage.get("prompt_tokens", usage.get("input_tokens")))
        found = size if size is not None else found
    return found


def relation_of(v: Violation) -> str | None:
    """The relation a violation judged: ``stream`` for ``stream_divergence``."""
    if v.oracle == "stream_divergence":
        return "stream"
    if v.oracle == "relation":
        return v.signature.removeprefix("relation:")
    return None


def steady(first: Observation, second: Observation) -> bool:
    """Whether two answers to the same greedy request show a client the same turn."""
    return served(first) and served(second) and difference(first, second) is None


def _prompts(case: Case, name: str, mine: int, theirs: int) -> str | None:
    """What a prompt relation finds wrong with the two sizes (``mine`` the request's,
    ``theirs`` its partner's), or None."""
    if name == "tools" and mine == theirs:
        return (
            f"the same prompt size ({mine} tokens) with the tools and without them: the tools "
            "never reached the prompt"
        )
    if name == "system" and theirs <= mine:
        return (
            f"a long system message first left the prompt at {theirs} tokens (without it "
            f"{mine}): the system message never reached the prompt"
        )
    if name == "tool_result" and theirs <= mine:
        return (
            f"a tool result {len(EXTRA_RESULT) + 1} characters longer left the prompt at "
            f"{theirs} tokens (before {mine}): the result was cut or dropped"
        )
    if name == "text_part" and mine != theirs:
        return (
            f"the same text costs {mine} prompt tokens one way and {theirs} the other (a "
            "string, one text part): the part is rendered otherwise"
        )
    if name == "chain" and mine != theirs:
        return (
            f"chained onto its stored answer the request costs {mine} prompt tokens, the same "
            f"conversation sent whole {theirs}: the stored context is not the conversation "
            "that answer closed"
        )
    spellings = special_count(case)
    if name == "special_token" and theirs - mine > spellings:
        return (
            f"{spellings} special-token spelling(s) in user text cost {theirs - mine} tokens "
            "fewer than their near misses: user text was read as control tokens"
        )
    return None


def _calls(obs: Observation) -> int:
    return len(obs.tool_calls)


def _generated(case: Case, name: str, obs: Observation, other: Observation) -> str | None:
    """What a greedy relation finds wrong with the two answers, or None."""
    if is_cut(case, obs) or is_cut(case, other):
        return None
    if name == "choice_auto" and shape(obs) != shape(other):
        auto, omitted = (obs, other) if case.options.tool_choice == "auto" else (other, obs)
        return (
            f'tool_choice "auto" gave {shape(auto)} where leaving it out gave {shape(omitted)}: '
            "the same request answered two ways"
        )
    if name == "required_calls" and _calls(other) < _calls(obs):
        return (
            f'tool_choice "required" gave {_calls(other)} call(s) where "auto" gave '
            f"{_calls(obs)}: required cut the calls"
        )
    return None


def _evidence(kind: str, obs: Observation, other: Observation) -> str:
    if kind == "prompt":
        sizes = prompt_size(obs), prompt_size(other)
        return f"prompt tokens: {sizes[0]} for the request, {sizes[1]} for its partner"
    return f"request: {side(obs)}\npartner: {side(other)}"


@register(
    "relation",
    expected="Two requests that differ in one known way get answers that differ (or agree) "
    "as the spec says: the relation and its two requests are below.",
    look_for="the two answers side by side: the prompt size each reports (usage "
    "prompt_tokens or input_tokens), or for tool_choice the kind of turn and the number of "
    "calls each gave",
    relations=_JUDGED,
)
def relation(case: Case, obs: Observation) -> Iterator[Violation]:
    """Two answers to related requests do not relate as the spec says: a prompt that does not
    change with its tools, system message or a tool result, text as a part costing otherwise
    than as a string, special tokens read from user text, or tool_choice auto, left out and
    required disagreeing."""
    for related in obs.related:
        name, other = related.relation, related.observation
        if name not in _JUDGED or not (served(obs) and served(other)):
            continue
        kind = RELATIONS[name].kind
        found = None
        if kind == "prompt":
            mine, theirs = prompt_size(obs), prompt_size(other)
            if mine is not None and theirs is not None:
                found = _prompts(case, name, mine, theirs)
        elif deterministic(case, obs):
            found = _generated(case, name, obs, other)
        if found is not None:
            yield Violation("relation", found, _evidence(kind, obs, other), f"relation:{name}")
