"""The oracle registry: named pure checks over one observed turn, run by ``check``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable

from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, Violation

__all__ = ["EVIDENCE_LIMIT", "Oracle", "check", "clip", "names", "register", "summaries"]

Oracle = Callable[[Case, Observation], Iterable[Violation]]

EVIDENCE_LIMIT = 500

_ORACLES: dict[str, Oracle] = {}


def register(name: str) -> Callable[[Oracle], Oracle]:
    """Add an oracle under ``name``; the name is what ``--oracles`` and repro bundles refer to."""

    def add(oracle: Oracle) -> Oracle:
        if name in _ORACLES:
            raise ValueError(f"oracle {name!r} is already registered")
        _ORACLES[name] = oracle
        return oracle

    return add


def names() -> list[str]:
    """Every registered oracle name, in registration order."""
    return list(_ORACLES)


def summaries() -> dict[str, str]:
    """Each oracle's name and one line on what it checks: its docstring's first sentence, so
    the line ``agentfuzz oracles`` prints cannot drift from the check it names."""
    return {name: _first_sentence(oracle.__doc__ or "") for name, oracle in _ORACLES.items()}


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
    for name, oracle in _ORACLES.items():
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
