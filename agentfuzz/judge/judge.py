"""The judge: what the oracles say about a case, whether a failure still fires over K tries, and
how often it does. The fuzz engine and ``agentfuzz reduce`` both judge through it.

A verdict is taken over a *group*: the case's own answer and the answers to the requests related
to it. A case's ``relation`` (``request.relations``) derives one partner request, and under
``--differential`` every case also gets its stream-flipped twin; the judge sends each right
after the case and attaches its answer (``Observation.related``), for ``relation`` and
``stream_divergence``; a session's refused turn gets its ``history_cut`` control
(``control.py``). A partner is sent only when the oracle that reads it is chosen. When a
greedy relation finds the two answers apart, the judge sends the group again and keeps the
finding only if each side repeated itself: a busy server's batch may flip a near-tie token,
and that is no fault. The judge does no I/O of its own: it sends through the ``send`` it is
given (``Target.observe``, wrapped by its caller) and hears of each verdict through ``seen``
(the engine offers findings and records cassettes there).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace

from agentfuzz import oracles
from agentfuzz.judge.control import HISTORY_CUT, ORACLES, history_cut
from agentfuzz.judge.trials import MEASURE_TRIES, fails_within, measure, rate
from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, Related, Violation
from agentfuzz.request.relations import RELATIONS, partner

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
        markup: Collection[str] = (),
    ) -> None:
        self.send, self.only, self.skip = send, only, skip
        self.differential = differential
        self.model_signatures = model_signatures
        self.markup = frozenset(markup)
        self.seen = seen
        # The last verdict in which the judged failure fired: the evidence a bundle is made of.
        self.fired: Verdict | None = None

    def observe(self, case: Case) -> Observation:
        """Send ``case`` and the requests related to it; the answer carries its group."""
        obs = self.send(case)
        related = []
        for name in self.relations(case):
            # The differential twin goes with every case; the oracle judges the greedy ones.
            other = partner(name, case) if name == case.relation else RELATIONS[name].derive(case)
            if other is not None:
                # After the case's own answer: a server that dies on a partner has answered it.
                related.append(Related(name, self.send(other)))
        control = history_cut(case, obs) if self._controlled() else None
        if control is not None:
            # Before a session oracle blames the history, the request without it (``control``).
            related.append(Related(HISTORY_CUT, self.send(control)))
        return replace(obs, related=tuple(related)) if related else obs

    def _controlled(self) -> bool:
        """Whether an oracle that reads the ``history_cut`` control is chosen."""
        chosen = [n for n in ORACLES if self.only is None or n in self.only]
        return any(n not in self.skip for n in chosen)

    def relations(self, case: Case) -> list[str]:
        """The relations whose partners go with ``case``: its own, and under ``differential``
        the stream twin; each only when the oracle that judges it is chosen."""
        names = [case.relation] if case.relation in RELATIONS else []
        if self.differential and "stream" not in names:
            names.append("stream")
        return [n for n in names if self._judged(n)]

    def _judged(self, relation: str) -> bool:
        """Whether the oracle that judges ``relation`` (``oracles.judged_by``) is chosen."""
        oracle = oracles.judged_by(relation)
        if oracle is None:
            return False
        return (self.only is None or oracle in self.only) and oracle not in self.skip

    def check(self, case: Case, obs: Observation) -> list[Violation]:
        """What the chosen oracles say about ``obs``, the answer to ``case``."""
        return check(case, obs, self.only, self.skip)

    def judged(self, case: Case, obs: Observation) -> list[Violation]:
        """What the chosen oracles say about ``obs``, less what a greedy relation found on a
        pair that did not repeat itself when sent again (``_steady``): a session's check."""
        return self._steady(case, obs, self.check(case, obs))

    def _steady(self, case: Case, obs: Observation, found: list[Violation]) -> list[Violation]:
        """``found`` without the greedy relations whose pair did not repeat itself when sent
        again: the disagreement may be the server's batching, not the server."""
        greedy = {r for v in found if (r := oracles.relation_of(v)) and _greedy(r)}
        if not greedy:
            return found
        again = self.observe(case)
        shaky = {
            name
            for name in greedy
            if not (
                oracles.steady(obs, again)
                and _steady_partner(obs.partner(name), again.partner(name))
            )
        }
        return [v for v in found if oracles.relation_of(v) not in shaky]

    def faults(self, found: Sequence[Violation]) -> tuple[Violation, ...]:
        """``found`` without what the profile says this target's model produces on its own."""
        prefixes = self.model_signatures
        return tuple(
            v
            for v in found
            if not (prefixes and v.signature.startswith(prefixes)) and not self._plain_text(v)
        )

    def _plain_text(self, v: Violation) -> bool:
        """A leaked_markup finding signed by a spelling this target cannot leak (``markup``):
        plain text to its tokenizer, written by the model. Judged by the signature's token, the
        first in the text: a real one after a model-written one in the same text is missed."""
        if not self.markup or v.oracle != "leaked_markup":
            return False
        return v.signature.split(":", 1)[1].removesuffix(":truncated") not in self.markup

    def verdict(self, case: Case) -> Verdict:
        """Send ``case`` once and judge the answer; ``seen`` hears of it before it is returned."""
        obs = self.observe(case)
        found = tuple(self.judged(case, obs))
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


def _greedy(relation: str) -> bool:
    return relation in RELATIONS and RELATIONS[relation].kind == "greedy"


def _steady_partner(first: Observation | None, second: Observation | None) -> bool:
    return first is not None and second is not None and oracles.steady(first, second)
