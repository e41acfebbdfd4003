"""What a run has found so far: the best example per distinct failure, and where the run is.

``FindingStore`` keeps, per distinct failure (oracle + signature), the smallest example known and
rewrites its repro bundle whenever a smaller one fails the same way. ``Status`` is the snapshot a
progress display reads: examples run, distinct failures per oracle, and the failure whose repro
last got smaller (what the shrinker is working on).
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentfuzz.findings.bundle import Repro, fold_bundles, observed_summary, write_bundle
from agentfuzz.judge.session import Turn
from agentfuzz.model.history import AssistantMessage, Case, ToolResult
from agentfuzz.model.observation import Observation, Violation
from agentfuzz.model.summary import Coverage, FindingRow, Latency, Summary, Symptom, TurnRow
from agentfuzz.oracles import by_needs, by_symptom, implies, rank
from agentfuzz.reduce.reduction import case_size
from agentfuzz.request.surface import features

__all__ = ["Finding", "FindingStore", "Report", "Status", "TurnTable", "fold", "mode_of"]


def history_digest(case: Case) -> str:
    """A short digest of a case's history (tools and items, not its knobs or mode), its call
    ids numbered in order: the same history whatever ids a repro ended up with."""
    numbered: dict[str, str] = {}
    for call in case.history.calls:
        numbered.setdefault(call.id, f"call_{len(numbered)}")
    items = []
    for it in case.history.items:
        if isinstance(it, AssistantMessage) and it.tool_calls:
            calls = tuple(
                c.model_copy(update={"id": numbered[c.id], "item_id": None}) for c in it.tool_calls
            )
            it = it.model_copy(update={"tool_calls": calls})
        elif isinstance(it, ToolResult):
            it = it.model_copy(update={"call_id": numbered.get(it.call_id, "orphan")})
        items.append(it.model_dump_json())
    text = case.history.model_copy(update={"items": ()}).model_dump_json() + "".join(items)
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def mode_of(case: Case) -> str:
    """The mode a case went out in: ``chat/stream``, ``session responses/no-stream``."""
    mode = f"{case.api}/{'stream' if case.stream else 'no-stream'}"
    return f"session {mode}" if case.session is not None else mode


# Session turn number -> (sessions that reached it, sessions whose turn failed there).
TurnTable = dict[int, tuple[int, int]]


@dataclass(frozen=True)
class Status:
    """Where a run is, for people watching it: sent after every example and shrink step."""

    # The mode being fuzzed ("chat/stream", "session responses/no-stream") or "shrink".
    phase: str
    # Examples run so far, over every mode.
    examples: int
    # Distinct failures so far, as (oracle, signature).
    failures: tuple[tuple[str, str], ...] = ()
    # The failure whose repro last got smaller, and its size now (history items).
    shrinking: tuple[str, int] | None = None
    # What the run does in that phase: generate, target (a later pass), shrink (after a
    # failure: Hypothesis shrinks it, and may still generate), reduce, confirm; "" before any.
    stage: str = ""

    def by_oracle(self) -> dict[str, int]:
        """Distinct failures per oracle, most first."""
        return dict(Counter(oracle for oracle, _ in self.failures).most_common())


@dataclass
class Finding:
    """The smallest known example of one distinct failure, and where its bundle lives."""

    violation: Violation
    case: Case
    observation: Observation
    bundle: Path
    reproduced: str = "pending"
    flaky: bool = False
    # The session that showed this failure, up to the failing turn (session mode only).
    transcript: tuple[Turn, ...] = ()
    # With --trials auto: tries per judgement, from the rate measured when first found.
    tries: int = 1
    measured: bool = False
    # The other failures the same request showed at once (its symptoms, when one cause).
    cofired: set[tuple[str, str]] = field(default_factory=set)
    # Modes (``chat/stream``, ``session responses/no-stream``) this failure was seen on.
    seen_on: set[str] = field(default_factory=set)
    # Modes the final repro was re-sent on and failed the same way (its own first).
    reproduces_on: tuple[str, ...] = ()
    # The API's rules the final repro still breaks because the failure needs them.
    needs: tuple[str, ...] = ()
    # How its call ids came about, when they are ids this server minted (``Mechanism``).
    mechanism: dict[str, Any] | None = None
    # The server's own id shape that stops the failure, when one does (``explain``).
    cleared_by: dict[str, Any] | None = None
    # Reduced, repaired and confirmed: a later, smaller example no longer replaces it.
    settled: bool = False
    # The symptom a finding signed by what it needs was found under (``oracles.by_needs``):
    # what the oracles still say of a request that shows it.
    symptom: tuple[str, str] | None = None

    @property
    def matches(self) -> tuple[str, str]:
        """The (oracle, signature) a request that shows this failure fires."""
        return self.symptom or self.violation.key

    @property
    def size(self) -> tuple[int, int, int, int]:
        return case_size(self.case)


@dataclass
class Report:
    """What a run found, for the summary table and the exit code."""

    findings: list[Finding] = field(default_factory=list)
    # Generated examples per mode (what --max-examples bounds); Hypothesis's shrink steps per
    # mode, and the steps of agentfuzz's own reduction and confirmation: each apart.
    examples: dict[str, int] = field(default_factory=dict)
    shrink_steps: dict[str, int] = field(default_factory=dict)
    reduce_steps: int = 0
    calls: int = 0
    elapsed: float = 0.0
    stopped_answering: bool = False
    interrupted: bool = False
    # Stopped by --max-time: what was found is written, maybe not fully shrunk or confirmed.
    out_of_time: bool = False
    # Stopped fuzzing at --max-failures distinct failures (then shrank and confirmed them).
    max_failures_reached: bool = False
    # Set when every answer was a 401/403/404/405/429: the target was not tested at all.
    not_served: str | None = None
    # A bug of ours ended the run: one line here, the traceback beside it (not in the summary).
    error: str | None = None
    traceback: str = ""
    # Session mode: per turn number, sessions that reached it and sessions that failed there.
    turns: TurnTable = field(default_factory=dict)
    # Per mode: each answer's seconds, and how many were slow answers (out of time, no fault).
    latency: dict[str, list[float]] = field(default_factory=dict)
    timeouts: dict[str, int] = field(default_factory=dict)
    # Per dimension of the request surface: how the target answered the requests that used it.
    coverage: dict[str, Coverage] = field(default_factory=dict)
    # What ran, for summary.json: found_by and the target (``Summary.run``).
    run: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> Summary:
        """The run as data: what ``summary.json`` holds for machines reading a run."""
        rows = [
            FindingRow(
                oracle=f.violation.oracle,
                signature=f.violation.signature,
                message=f.violation.message,
                size=f.case.history.size,
                reproduced=f.reproduced,
                flaky=f.flaky,
                bundle=str(f.bundle),
                seen_on=sorted(f.seen_on),
                reproduces_on=list(f.reproduces_on),
                needs=list(f.needs),
                cofired=sorted(f.cofired),
                history=history_digest(f.case),
                cleared_by=f.cleared_by,
            )
            for f in self.findings
        ]
        examples = sum(self.examples.values())
        return Summary(
            findings=rows,
            run=self.run,
            examples=self.examples,
            shrink_steps=self.shrink_steps,
            reduce_steps=self.reduce_steps,
            requests=self.calls,
            elapsed_s=round(self.elapsed, 3),
            examples_per_s=round(examples / self.elapsed, 1) if self.elapsed else None,
            session_turns={
                str(n): TurnRow(reached=r, failed=f) for n, (r, f) in sorted(self.turns.items())
            },
            stopped_answering=self.stopped_answering,
            interrupted=self.interrupted,
            out_of_time=self.out_of_time,
            max_failures_reached=self.max_failures_reached,
            not_served=self.not_served,
            error=self.error,
            latency={m: Latency.of(s, self.timeouts.get(m, 0)) for m, s in self.latency.items()},
            samples=self.latency,
            coverage=self.coverage,
        )


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
        moves to the folder of that signature."""
        finding = self.by_key.pop(key)
        shutil.rmtree(finding.bundle, ignore_errors=True)
        finding.violation = by_needs(finding.violation, finding.case)
        finding.symptom = key
        self.splits[key] = {finding.violation.key: frozenset(features(finding.case))}
        self.by_key[finding.violation.key] = finding
        finding.bundle = self.write(finding)
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
        for other, other_needs in list(split.items()):
            if other_needs <= needs:
                self.by_key[other].seen_on |= finding.seen_on
                return None
            if needs < other_needs:
                replaced = self.by_key.pop(other)
                del split[other]
                shutil.rmtree(replaced.bundle, ignore_errors=True)
                finding.seen_on |= replaced.seen_on
        split[finding.violation.key] = needs
        self.by_key[finding.violation.key] = finding
        finding.bundle = self.write(finding)
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


def _implies(a: FindingRow, b: FindingRow) -> bool:
    """Whether ``a``'s failure implies ``b``'s wherever both show, as ``a``'s oracle states
    (``oracles.implies``: an empty turn implies that a required call did not come)."""
    return implies((a.oracle, a.signature), (b.oracle, b.signature))


def _shows(a: FindingRow, b: FindingRow) -> bool:
    """Whether ``a``'s final request showed ``b``'s failure too."""
    return (b.oracle, b.signature) in a.cofired


def _cleared_alike(a: FindingRow, b: FindingRow) -> bool:
    """Both failures stop when the history's ids take the same shape the server mints (on
    whichever mode each found it: one shape, one fix)."""
    if a.cleared_by is None or b.cleared_by is None:
        return False
    return bool(a.cleared_by.get("shape")) and a.cleared_by.get("shape") == b.cleared_by.get(
        "shape"
    )


def _one_cause(a: FindingRow, b: FindingRow) -> bool:
    """Shown together on one request, and either the same history or one implying the other;
    or both cleared by the server's own id shape."""
    a_shows_b, b_shows_a = _shows(a, b), _shows(b, a)
    if (a_shows_b or b_shows_a) and a.history and a.history == b.history:
        return True
    if (b_shows_a and _implies(a, b)) or (a_shows_b and _implies(b, a)):
        return True
    return _cleared_alike(a, b)


def fold(summary: Summary) -> Summary:
    """One finding per root cause. Two findings are one cause when their final requests share
    a history (tools and items; the knobs may differ) and one's request showed the other's
    failure too; when one's request showed a failure that implies its own (an empty turn
    implies that a required call did not come); or when both stop once the history's call ids
    take the shape this server mints itself (``explain``'s ``cleared_by``: one fix, ids the
    server's own, removes both). The groups are what that relation joins. Each group becomes
    its most telling finding, listing every symptom with the modes it was seen on; the bundle
    of a symptom its request shows goes, and one its request does not show moves inside its
    bundle (``symptoms/``), a repro of its own. Distinct causes stay distinct."""
    rows = summary.findings
    keys = [(r.oracle, r.signature) for r in rows]
    parent = list(range(len(rows)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(rows):
        for j in range(i + 1, len(rows)):
            b = rows[j]
            if _one_cause(a, b):
                parent[root(j)] = root(i)
    groups: dict[int, list[int]] = {}
    for i in range(len(rows)):
        groups.setdefault(root(i), []).append(i)
    if all(len(g) == 1 for g in groups.values()):
        return summary
    folded = []
    for members in groups.values():
        if len(members) == 1:
            folded.append(rows[members[0]])
            continue

        def telling(i: int, members: list[int] = members) -> tuple[bool, int, int, int]:
            implied = any(_implies(rows[j], rows[i]) for j in members)
            shows = sum(keys[j] in rows[i].cofired for j in members)
            # Which of one cause's symptoms names it: the one of lowest rank (``oracles.rank``).
            return (implied, -shows, rank(rows[i].oracle), i)

        order = sorted(members, key=telling)
        head = rows[order[0]]
        # Shown by the head's request, or by one sharing its history: that request is the repro.
        kept = {
            i
            for i in order[1:]
            if not (_shows(head, rows[i]) or (head.history and rows[i].history == head.history))
        }
        symptoms = [
            Symptom(
                oracle=rows[i].oracle,
                signature=rows[i].signature,
                message=rows[i].message,
                seen_on=rows[i].seen_on,
                reproduced=rows[i].reproduced,
                repro=f"symptoms/{Path(rows[i].bundle).name}" if i in kept else None,
            )
            for i in order
        ]
        seen = sorted({m for i in members for m in rows[i].seen_on})
        fold_bundles(
            Path(head.bundle),
            [s.model_dump() for s in symptoms],
            [Path(rows[i].bundle) for i in order[1:] if i not in kept],
            [Path(rows[i].bundle) for i in order[1:] if i in kept],
        )
        folded.append(head.model_copy(update={"symptoms": symptoms, "seen_on": seen}))
    return summary.model_copy(update={"findings": folded})
