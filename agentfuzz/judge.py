"""The judge: what the oracles say about a case, whether a failure still fires over K tries, and
how often it does. The fuzz engine and ``agentfuzz reduce`` both judge through it.

A verdict is taken over a *group*: the case's own answer and the answers to the requests related
to it. Today the one relation is the stream-flipped twin (``--differential``), which rides as the
answer's ``Observation.twin`` for ``stream_divergence``; a new relation is one more request the
judge sends for a case, not a new pipeline. The judge does no I/O of its own: it sends through the
``send`` it is given (``Target.observe``, wrapped by its caller) and hears of each verdict through
``seen`` (the engine offers findings and records cassettes there).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace

from agentfuzz import oracles
from agentfuzz.history import Case
from agentfuzz.observation import Observation, Violation
from agentfuzz.trials import MEASURE_TRIES, fails_within, measure, rate

__all__ = [
    "Judge",
    "Match",
    "Verdict",
    "any_of",
    "check",
    "oracle_names",
    "oracle_summaries",
    "same_failure",
]

# Which violations count as "the failure" being judged.
Match = Callable[[Violation], bool]


def same_failure(key: tuple[str, str]) -> Match:
    """The failure with this (oracle, signature) key, as the engine tracks findings."""
    return lambda v: v.key == key


def any_of(oracle: str | None) -> Match:
    """Any violation of ``oracle``, or of any oracle when None (what ``reduce --oracle`` means)."""
    return lambda v: oracle is None or v.oracle == oracle


def check(
    case: Case, obs: Observation, only: Collection[str] | None = None, skip: Collection[str] = ()
) -> list[Violation]:
    """What the oracles say of ``obs``, the answer to ``case``."""
    return oracles.check(case, obs, only=only, skip=skip)


def oracle_names() -> list[str]:
    """Every oracle's name, in the public order (what ``--only`` and ``--skip`` accept)."""
    return oracles.names()


def oracle_summaries() -> dict[str, str]:
    """Every oracle's name and one line on what it checks, in the public order (what
    ``agentfuzz oracles`` prints)."""
    return oracles.summaries()


@dataclass(frozen=True)
class Verdict:
    """One judged case: what it sent and got back (its group with it), and what was wrong.

    ``violations`` is every oracle's word (a cassette keeps them all, so a replay judges alike);
    ``faults`` leaves out what the profile says the target's model produces on its own.
    """

    case: Case
    observation: Observation
    violations: tuple[Violation, ...]
    faults: tuple[Violation, ...]


class Judge:
    """Verdicts on cases sent through ``send``, under one choice of oracles."""

    def __init__(
        self,
        send: Callable[[Case], Observation],
        only: Collection[str] | None = None,
        skip: Collection[str] = (),
        differential: bool = False,
        model_signatures: tuple[str, ...] = (),
        seen: Callable[[Verdict], None] = lambda _: None,
    ) -> None:
        self.send, self.only, self.skip = send, only, skip
        self.differential = differential
        self.model_signatures = model_signatures
        self.seen = seen
        # The last verdict in which the judged failure fired: the evidence a bundle is made of.
        self.fired: Verdict | None = None

    def observe(self, case: Case) -> Observation:
        """Send ``case`` and the requests related to it; the answer carries its group."""
        obs = self.send(case)
        if self.differential:
            # After the case's own answer: a server that dies on the twin has answered the case.
            flipped = case.model_copy(update={"stream": not case.stream})
            obs = replace(obs, twin=self.send(flipped))
        return obs

    def check(self, case: Case, obs: Observation) -> list[Violation]:
        """What the chosen oracles say about ``obs``, the answer to ``case``."""
        return check(case, obs, self.only, self.skip)

    def faults(self, found: Sequence[Violation]) -> tuple[Violation, ...]:
        """``found`` without what the profile says this target's model produces on its own."""
        prefixes = self.model_signatures
        return tuple(v for v in found if not (prefixes and v.signature.startswith(prefixes)))

    def verdict(self, case: Case) -> Verdict:
        """Send ``case`` once and judge the answer; ``seen`` hears of it before it is returned."""
        obs = self.observe(case)
        found = tuple(self.check(case, obs))
        verdict = Verdict(case, obs, found, self.faults(found))
        self.seen(verdict)
        return verdict

    def fires(self, match: Match, case: Case) -> bool:
        """One try: whether the failure ``match`` picks shows among ``case``'s faults."""
        verdict = self.verdict(case)
        hit = any(match(v) for v in verdict.faults)
        if hit:
            self.fired = verdict
        return hit

    def still_fails(self, match: Match, case: Case, tries: int) -> bool:
        """Whether the failure fires in at least one of ``tries`` tries (stops at the first)."""
        return fails_within(tries, lambda: self.fires(match, case))

    def hits(self, match: Match, case: Case, tries: int = MEASURE_TRIES) -> int:
        """In how many of ``tries`` tries the failure fires (to derive K from)."""
        return measure(tries, lambda: self.fires(match, case))

    def rate(self, match: Match, case: Case, tries: int = MEASURE_TRIES) -> tuple[int, int]:
        """A final repro's rate as ``(failures, tries)``, extended so a flaky one can be quoted
        (``trials.rate``)."""
        return rate(lambda: self.fires(match, case), tries)
