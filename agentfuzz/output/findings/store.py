"""The best example a run knows of each distinct failure, its repro bundle rewritten as it improves.

``FindingStore`` keeps, per distinct failure (oracle + signature), the smallest example known and
rewrites its repro bundle whenever a smaller one fails the same way.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

from agentfuzz.judge.session import Turn
from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, Violation
from agentfuzz.oracles import by_needs, by_symptom
from agentfuzz.output.findings.bundle import Repro, observed_summary, write_bundle
from agentfuzz.output.findings.finding import Finding, mode_of
from agentfuzz.output.findings.status import Status
from agentfuzz.reduce.reduction import case_size
from agentfuzz.request.surface import features

__all__ = ["FindingStore"]


# Per symptom (``oracles.by_symptom``): the distinct feature sets kept as alternates, and the
# findings at most one symptom is split into.
ALTERNATES = 8
SPLIT_AT_MOST = 4


class FindingStore:
    """Keeps the best example per distinct failure and writes its bundle as it improves.

    A failure signed by its symptom alone (a bare 500, a dropped connection) may be several
    faults. Until it is reduced the store keeps, beside its best example, the smallest example
    of each other feature set that showed it (``alternates``); once reduced, the finding is
    signed by what its repro needs (``split``), and an alternate lacking some of that may be
    reduced in turn (``next_alternate``, ``settle_alternate``) into a finding of its own.
    """

    def __init__(
        self,
        out: Path,
        found_by: dict[str, Any] | None = None,
        target: dict[str, Any] | None = None,
    ) -> None:
        self.out, self.found_by, self.target = out, found_by, target
        self.by_key: dict[tuple[str, str], Finding] = {}
        # The failure whose repro last got smaller, and its size then: what shrinking is doing.
        self.shrinking: tuple[str, int] | None = None
        # Per symptom not yet split: the smallest example of each feature set that showed it.
        self.alternates: dict[tuple[str, str], dict[tuple[str, ...], Finding]] = {}
        # Per symptom split: each finding's key, and the features it needs.
        self.splits: dict[tuple[str, str], dict[tuple[str, str], frozenset[str]]] = {}
        # Per symptom: the alternate being reduced now, which its offers improve.
        self.reducing: dict[tuple[str, str], Finding] = {}

    def offer(
        self,
        violation: Violation,
        case: Case,
        obs: Observation,
        transcript: tuple[Turn, ...] = (),
        together: frozenset[tuple[str, str]] = frozenset(),
    ) -> None:
        """``violation`` seen on ``case``; ``together``: every failure that answer showed."""
        together = frozenset(self._resolved(key, case) for key in together)
        symptom = violation.key
        if symptom in self.reducing:
            self._improve(self.reducing[symptom], violation, case, obs, transcript)
            return
        if symptom in self.splits:
            key = self._resolved(symptom, case)
            if key == symptom:
                return  # none of its faults' needs: nothing one of them can learn from it
            violation = dataclasses.replace(violation, signature=key[1])
        elif by_symptom(violation.signature):
            self._keep_alternate(violation, case, obs, transcript)
        current = self.by_key.get(violation.key)
        where = mode_of(case)
        if current is not None:
            current.seen_on.add(where)
            if case == current.case:
                current.cofired |= together - {violation.key}
            if current.settled:
                return
        candidate = Finding(violation, case, obs, Path(), transcript=transcript)
        candidate.seen_on.add(where)
        candidate.cofired = set(together - {violation.key})
        if current is not None and candidate.size >= current.size:
            if transcript and not current.transcript:
                # A synthetic example was smaller, but the session that met it too is evidence.
                current.transcript = transcript
                self.write(current)
            return
        if current is not None:
            candidate.tries, candidate.measured = current.tries, current.measured
            candidate.seen_on |= current.seen_on
            self.shrinking = (violation.oracle, case.history.size)
        if current is not None and not transcript:
            # A reduced (or synthetic) request keeps the session it came from.
            candidate.transcript = current.transcript
        if current is not None:
            candidate.symptom = current.symptom
        candidate.bundle = self.write(candidate)
        self.by_key[violation.key] = candidate

    def _resolved(self, key: tuple[str, str], case: Case) -> tuple[str, str]:
        """A split symptom's key as the finding among its own whose needs ``case`` has (the
        first found, when several); any other key as it is."""
        have = set(features(case))
        for refined, needs in self.splits.get(key, {}).items():
            if needs <= have:
                return refined
        return key

    def _keep_alternate(
        self, violation: Violation, case: Case, obs: Observation, transcript: tuple[Turn, ...]
    ) -> None:
        kept = self.alternates.setdefault(violation.key, {})
        shape = features(case)
        if shape in kept or len(kept) < ALTERNATES:
            self._improve(kept.get(shape), violation, case, obs, transcript, kept, shape)

    def _improve(
        self,
        current: Finding | None,
        violation: Violation,
        case: Case,
        obs: Observation,
        transcript: tuple[Turn, ...],
        into: dict[tuple[str, ...], Finding] | None = None,
        shape: tuple[str, ...] = (),
    ) -> None:
        """Keep ``case`` in place of ``current`` when it is smaller (an alternate, or the one
        being reduced), its bundle unwritten."""
        if current is not None:
            current.seen_on.add(mode_of(case))
            if case_size(case) >= current.size:
                return
        better = Finding(violation, case, obs, Path(), transcript=transcript)
        better.seen_on.add(mode_of(case))
        if current is not None:
            better.seen_on |= current.seen_on
            better.transcript = transcript or current.transcript
        if into is not None:
            into[shape] = better
        else:
            self.reducing[violation.key] = better

    def split(self, key: tuple[str, str]) -> Finding:
        """Sign the reduced finding of symptom ``key`` by what its repro needs; its bundle
        moves to the folder of that signature (written there before the old one goes: a run
        stopped in between keeps one of them)."""
        finding = self.by_key.pop(key)
        old = finding.bundle
        finding.violation = by_needs(finding.violation, finding.case)
        finding.symptom = key
        self.splits[key] = {finding.violation.key: frozenset(features(finding.case))}
        self.by_key[finding.violation.key] = finding
        finding.bundle = self.write(finding)
        _remove(old, finding.bundle)
        return finding

    def next_alternate(self, key: tuple[str, str]) -> Finding | None:
        """The smallest alternate of split symptom ``key`` that lacks something each of its
        findings so far needs (another fault, or the same one the reduction will say so of),
        now the one being reduced; None when there is none, or enough findings."""
        split = self.splits[key]
        left = sorted(self.alternates.get(key, {}).values(), key=lambda f: f.size)
        if len(split) >= SPLIT_AT_MOST:
            return None
        for alternate in left:
            have = set(features(alternate.case))
            del self.alternates[key][features(alternate.case)]
            if not any(needs <= have for needs in split.values()):
                self.reducing[key] = alternate
                return alternate
        return None

    def settle_alternate(self, key: tuple[str, str]) -> Finding | None:
        """The alternate of ``key`` just reduced, signed by what it needs: a new finding, or
        None when an earlier one of the symptom's needs no more than it (the same fault,
        reduced less far). An earlier one that needs more than it is that fault reduced less
        far: the new one takes its place."""
        finding = self.reducing.pop(key)
        finding.violation = by_needs(finding.violation, finding.case)
        finding.symptom = key
        needs, split = frozenset(features(finding.case)), self.splits[key]
        replaced: list[Finding] = []
        for other, other_needs in list(split.items()):
            if other_needs <= needs:
                self.by_key[other].seen_on |= finding.seen_on
                return None
            if needs < other_needs:
                replaced.append(self.by_key.pop(other))
                del split[other]
                finding.seen_on |= replaced[-1].seen_on
        split[finding.violation.key] = needs
        self.by_key[finding.violation.key] = finding
        finding.bundle = self.write(finding)
        # Only once its successor is on disk: a run stopped in between keeps one of them.
        for gone in replaced:
            _remove(gone.bundle, finding.bundle)
        return finding

    def status(self, phase: str, examples: int, stage: str = "") -> Status:
        """What a progress display shows of the run at this point."""
        return Status(phase, examples, tuple(self.by_key), self.shrinking, stage)

    def write(self, finding: Finding) -> Path:
        # The exchange holds the exact URL and body that were sent: the repro is that request.
        exchange = finding.observation.exchange
        repro = Repro(
            url=exchange.url,
            request=exchange.request,
            case=finding.case,
            violation=finding.violation,
            observed=observed_summary(finding.observation),
            reproduced=finding.reproduced,
            transcript=finding.transcript,
            observation=finding.observation,
            found_by=self.found_by,
            target=self.target,
            seen_on=tuple(sorted(finding.seen_on)),
            reproduces_on=finding.reproduces_on,
            needs=finding.needs,
            mechanism=finding.mechanism,
            cleared_by=finding.cleared_by,
        )
        return write_bundle(self.out, repro)


def _remove(bundle: Path, kept: Path) -> None:
    """Remove ``bundle``, unless it is ``kept`` (or no folder at all)."""
    if bundle != kept and bundle != Path():
        shutil.rmtree(bundle, ignore_errors=True)
