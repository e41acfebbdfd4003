"""Oracles: pure checks over one observed turn, registered by name.

``check(case, observation)`` runs them; ``names()`` lists them in their public order. Each
family lives in a private module that registers its oracles when imported here, each with what
it means (``OracleInfo``): what a correct answer is, what to look for, which symptom names a
cause, what it implies, what it suspects when a server dies, which relations it judges. The
rest of agentfuzz reads that through ``info``, ``rank``, ``implies``, ``suspect`` and
``judged_by``.
"""

from __future__ import annotations

from agentfuzz.oracles._registry import (
    RANK_LAST,
    Oracle,
    OracleInfo,
    check,
    implies,
    info,
    judged_by,
    names,
    rank,
    register,
    summaries,
)

# The import order below is the registration order, hence the public order of names().
# isort: off
from agentfuzz.oracles import _outcome  # empty_turn, error
from agentfuzz.oracles import _markup  # leaked_markup
from agentfuzz.oracles import _identity  # identity, index_gap
from agentfuzz.oracles import _calls  # bad_arguments, unknown_tool, tool_choice
from agentfuzz.oracles import _wire  # wire_schema
from agentfuzz.oracles import _consistency  # consistency
from agentfuzz.oracles import _knob  # knob
from agentfuzz.oracles import _framing  # framing
from agentfuzz.oracles import _puppet  # puppet_truth
from agentfuzz.oracles import _puppet_cut  # puppet_cut
from agentfuzz.oracles import _session  # self_rejection, id_roundtrip
from agentfuzz.oracles import _middleman  # proxy_fidelity
from agentfuzz.oracles import _relation  # relation
from agentfuzz.oracles import _divergence  # stream_divergence

# isort: on
from agentfuzz.oracles._outcome import by_needs, by_symptom, suspect
from agentfuzz.oracles._relation import relation_of, steady

__all__ = [
    "RANK_LAST",
    "Oracle",
    "OracleInfo",
    "by_needs",
    "by_symptom",
    "check",
    "implies",
    "info",
    "judged_by",
    "names",
    "rank",
    "register",
    "relation_of",
    "steady",
    "summaries",
    "suspect",
]

# Imported only for the oracles they register.
del (
    _outcome,
    _markup,
    _identity,
    _calls,
    _wire,
    _session,
    _middleman,
    _relation,
    _divergence,
    _puppet,
    _puppet_cut,
    _consistency,
    _knob,
    _framing,
)
