"""Relations: pairs of requests whose answers must relate in a way the spec fixes.

A relation takes a generated request (the case) and derives its *partner*: the same request
with one thing changed whose effect on the answer is known. The judge sends the partner right
after the case, and the ``relation`` oracle (``stream_divergence`` for the ``stream`` relation)
judges the two answers together. This module only derives requests: every function is pure,
a ``Case`` in and a ``Case`` out, and the strategies draw ``Case.relation`` from it. It is the
public face: the relations themselves live by kind in ``_prompt_relations`` and
``_greedy_relations``, what they share in ``_pairing``, the special tokens in ``_special_tokens``.

Two kinds, by what the judgement reads:

- ``prompt`` relations compare the prompt's size the server reports (chat
  ``usage.prompt_tokens``, Responses ``usage.input_tokens``). That figure depends on the
  rendered prompt alone, never on what the model writes nor on how the server batches, so a
  difference, or the lack of one, is the server's doing;
- ``greedy`` relations compare what the model wrote, at temperature 0. A GPU server's batch can
  still flip a near-tie token, so the judge sends a disagreeing pair a second time and believes
  the disagreement only when each side repeats its own answer.

``prepare`` makes a drawn case fit its relation (a greedy one asks for temperature 0, a prompt
one on a chat stream asks for the usage chunk, ``special_token`` puts a special token in the
last user message); it returns None where the relation cannot apply at all.
"""

from __future__ import annotations

from agentfuzz.model.history import Case
from agentfuzz.request._greedy_relations import GREEDY_RELATIONS
from agentfuzz.request._pairing import Relation
from agentfuzz.request._prompt_relations import EXTRA_RESULT, EXTRA_SYSTEM, PROMPT_RELATIONS
from agentfuzz.request._special_tokens import SPECIAL_TOKENS, near_miss, special_count

__all__ = [
    "EXTRA_RESULT",
    "EXTRA_SYSTEM",
    "RELATIONS",
    "SPECIAL_TOKENS",
    "Relation",
    "near_miss",
    "partner",
    "prepared",
    "special_count",
]

RELATIONS: dict[str, Relation] = {r.name: r for r in (*PROMPT_RELATIONS, *GREEDY_RELATIONS)}


def prepared(name: str, case: Case, pick: int = 0) -> Case | None:
    """``case`` made fit for relation ``name`` (``pick`` chooses among the ways there are, a
    special token for ``special_token``), with ``Case.relation`` set; None when it cannot be."""
    fitted = RELATIONS[name].fit(case, pick)
    if fitted is None or not RELATIONS[name].ready(fitted):
        return None
    return fitted.model_copy(update={"relation": name})


def partner(name: str, case: Case) -> Case | None:
    """The request relation ``name`` pairs with ``case``, or None when ``case`` does not meet
    the relation's preconditions (then there is nothing to judge). The partner carries no
    relation of its own."""
    relation = RELATIONS.get(name)
    if relation is None or not relation.ready(case):
        return None
    return relation.derive(case).model_copy(update={"relation": None})
