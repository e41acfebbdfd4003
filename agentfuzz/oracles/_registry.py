"""The oracle registry: named pure checks over one observed turn, run by ``check``, each kept
beside what it means (``OracleInfo``), so reports, folding, the judge and runs read that from
the one place the oracle is registered."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, Violation

__all__ = [
    "EVIDENCE_LIMIT",
    "RANK_LAST",
    "Oracle",
    "OracleInfo",
    "check",
    "clip",
    "implies",
    "info",
    "judged_by",
    "names",
    "rank",
    "register",
    "summaries",
]

Oracle = Callable[[Case, Observation], Iterable[Violation]]

EVIDENCE_LIMIT = 500

# The rank of an oracle that states none: its failure explains no other one's, so it comes after
# every ranked oracle. Those that share it are told apart by the order they were found in.
RANK_LAST = 1000


@dataclass(frozen=True)
class OracleInfo:
    """What an oracle means to a reader of its findings and to the parts that fold, judge and
    merge them. Stated in the oracle's ``@register`` call, so it cannot drift from the check."""

    # What a correct server does: the "expected" line of REPORT.md.
    expected: str = ""
    # What shows the fault in the raw answer ``repro.sh`` prints: REPORT.md and repro.sh say it.
    look_for: str = ""
    # When one cause's symptoms fire on one request, the one of lowest rank names the cause.
    rank: int = RANK_LAST
    # Per signature of this oracle: other failures' signatures it implies on the same answer,
    # which then say nothing more than it does.
    implies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Signatures (their symptom, before what a repro needs) that make each request in flight a
    # suspect when the server dies: a run keeps every shard's repro of them.
    suspects: tuple[str, ...] = ()
    # The relations (``request.relations``) whose partner answers this oracle judges: the judge
    # sends a partner only when the oracle that judges it is chosen.
    relations: tuple[str, ...] = ()


class _Registered(NamedTuple):
    oracle: Oracle
    info: OracleInfo


_ORACLES: dict[str, _Registered] = {}


def register(
    name: str,
    *,
    expected: str = "",
    look_for: str = "",
    rank: int = RANK_LAST,
    implies: Mapping[str, tuple[str, ...]] | None = None,
    suspects: tuple[str, ...] = (),
    relations: tuple[str, ...] = (),
) -> Callable[[Oracle], Oracle]:
    """Add an oracle under ``name``, with what it means (``OracleInfo``); the name is what
    ``--oracles`` and repro bundles refer to. A relation is judged by one oracle at most."""
    about = OracleInfo(
        expected=expected,
        look_for=look_for,
        rank=rank,
        implies=MappingProxyType(dict(implies or {})),
        suspects=suspects,
        relations=relations,
    )

    def add(oracle: Oracle) -> Oracle:
        if name in _ORACLES:
            raise ValueError(f"oracle {name!r} is already registered")
        taken = [r for r in relations if judged_by(r) is not None]
        if taken:
            raise ValueError(f"relation(s) {', '.join(taken)} already judged by another oracle")
        _ORACLES[name] = _Registered(oracle, about)
        return oracle

    return add


def names() -> list[str]:
    """Every registered oracle name, in registration order."""
    return list(_ORACLES)


def summaries() -> dict[str, str]:
    """Each oracle's name and one line on what it checks: its docstring's first sentence, so
    the line ``agentfuzz oracles`` prints cannot drift from the check it names."""
    return {name: _first_sentence(entry.oracle.__doc__ or "") for name, entry in _ORACLES.items()}


def info(name: str) -> OracleInfo | None:
    """What oracle ``name`` means; None for a name not registered (a bundle of another
    version's oracle)."""
    entry = _ORACLES.get(name)
    return entry.info if entry is not None else None


def rank(name: str) -> int:
    """Oracle ``name``'s rank among one cause's symptoms: the lowest names the cause."""
    about = info(name)
    return RANK_LAST if about is None else about.rank


def implies(failure: tuple[str, str], other: tuple[str, str]) -> bool:
    """Whether ``failure`` implies ``other`` (each an (oracle, signature) key) wherever both
    show on one answer, as ``failure``'s oracle states (``OracleInfo.implies``)."""
    about = info(failure[0])
    return about is not None and other[1] in about.implies.get(failure[1], ())


def judged_by(relation: str) -> str | None:
    """The oracle that judges ``relation``'s pairs (``OracleInfo.relations``), if any."""
    for name, entry in _ORACLES.items():
        if relation in entry.info.relations:
            return name
    return None


def _first_sentence(doc: str) -> str:
    words = " ".join(doc.strip().split("\n\n")[0].split()).replace("``", "")
    head, dot, _ = words.partition(". ")
    line = head + "." if dot else words
    # A long first sentence keeps its claim, before the colon that explains it.
    claim, colon, _ = line.partition(": ")
    return claim + "." if colon and len(line) > 100 and len(claim) > 40 else line


def _validate(selection: Collection[str], what: str) -> None:
    unknown = sorted(set(selection) - _ORACLES.keys())
    if unknown:
        raise ValueError(
            f"unknown oracle(s) in {what}: {', '.join(unknown)}; valid: {', '.join(_ORACLES)}"
        )


def check(
    case: Case,
    obs: Observation,
    only: Collection[str] | None = None,
    skip: Collection[str] = (),
) -> list[Violation]:
    """Run the selected oracles (all but ``skip``, or just ``only``) and collect what they find.

    A slow answer (``Exchange.slow``) is judged by none: what the model had not finished says
    nothing of the server. A malformed body (``Options.malformed``) is judged by ``error``
    alone: its right answer is a JSON 4xx, so a 5xx, a non-JSON answer or a dropped connection
    is the server's. Not a slow one: a server that queues every request behind the model's work
    (or is merely loaded) cannot be told from one that hangs on the body."""
    if only is not None:
        _validate(only, "only")
    _validate(skip, "skip")
    found: list[Violation] = []
    if obs.exchange.slow:
        return found
    malformed = case.options.malformed is not None
    for name, (oracle, _) in _ORACLES.items():
        if (only is not None and name not in only) or name in skip:
            continue
        if malformed and name != "error":
            continue
        for v in oracle(case, obs):
            # The registry, not the oracle, is the authority on names and evidence size.
            if v.oracle != name or len(v.evidence) > EVIDENCE_LIMIT:
                v = dataclasses.replace(v, oracle=name, evidence=clip(v.evidence))
            found.append(v)
    return found


def clip(text: str, limit: int = EVIDENCE_LIMIT) -> str:
    """Shorten ``text`` to at most ``limit`` characters, marking the cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
