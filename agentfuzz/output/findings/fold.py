"""One finding per root cause: the findings of a run that one fault explains, folded into one.

Two findings are one cause when their final requests share a history (tools and items; the
knobs may differ) and one's request showed the other's failure too; when one's request showed
a failure that implies its own (an empty turn implies that a required call did not come); or
when both stop once the history's call ids take the shape this server mints itself
(``explain``'s ``cleared_by``: one fix, ids the server's own, removes both).
"""

from __future__ import annotations

from pathlib import Path

from agentfuzz.model.summary import FindingRow, Summary, Symptom
from agentfuzz.oracles import implies, rank
from agentfuzz.output.findings.bundle import fold_bundles

__all__ = ["fold"]


def fold(summary: Summary) -> Summary:
    """One finding per root cause (see the module). The groups are what that relation joins.
    Each group becomes its most telling finding, listing every symptom with the modes it was
    seen on; the bundle of a symptom its request shows goes, and one its request does not show
    moves inside its bundle (``symptoms/``), a repro of its own. Distinct causes stay distinct.

    A run cut short (stopped, out of time, the server gone, broken) removes no bundle: its
    head's request was not confirmed to show the others, and each may be a smaller repro than
    the head's, so each moves inside, a repro of its own. Nothing found is ever lost."""
    rows = summary.findings
    groups = _causes(rows)
    if all(len(group) == 1 for group in groups):
        return summary
    cut = (summary.interrupted, summary.out_of_time, summary.stopped_answering, summary.error)
    whole = not (any(cut) or summary.failed_shards)
    folded = [_merged([rows[i] for i in group], whole) for group in groups]
    return summary.model_copy(update={"findings": folded})


def _causes(rows: list[FindingRow]) -> list[list[int]]:
    """The rows' indices grouped by what ``_one_cause`` joins, directly or through others;
    each group in the rows' order, the groups in the order of their first row."""
    parent = list(range(len(rows)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(rows):
        for j in range(i + 1, len(rows)):
            if _one_cause(a, rows[j]):
                parent[root(j)] = root(i)
    groups: dict[int, list[int]] = {}
    for i in range(len(rows)):
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


def _merged(group: list[FindingRow], whole: bool) -> FindingRow:
    """One cause's findings as one row, its bundles folded on disk; a lone finding as it is.
    ``whole``: the run ended on its own, every repro settled."""
    if len(group) == 1:
        return group[0]
    head, *others = _most_telling_first(group)
    # A symptom shown by the head's request, or by one sharing its history, needs no repro of
    # its own: that request is the repro. Any other keeps its bundle, inside the head's.
    apart = [not (whole and _repro_shows(head, row)) for row in others]
    symptoms = [_symptom(head, False)] + [
        _symptom(row, own) for row, own in zip(others, apart, strict=True)
    ]
    fold_bundles(
        Path(head.bundle),
        [s.model_dump() for s in symptoms],
        [Path(row.bundle) for row, own in zip(others, apart, strict=True) if not own],
        [Path(row.bundle) for row, own in zip(others, apart, strict=True) if own],
    )
    seen = sorted({mode for row in group for mode in row.seen_on})
    return head.model_copy(update={"symptoms": symptoms, "seen_on": seen})


def _most_telling_first(group: list[FindingRow]) -> list[FindingRow]:
    """One cause's findings, the one that names it first: one no other implies, then the one
    whose request showed most of the others, then the lowest rank (``oracles.rank``), then the
    first found."""

    def telling(i: int) -> tuple[bool, int, int, int]:
        row = group[i]
        implied = any(_implies(other, row) for other in group)
        shows = sum(_shows(row, other) for other in group)
        return (implied, -shows, rank(row.oracle), i)

    return [group[i] for i in sorted(range(len(group)), key=telling)]


def _repro_shows(head: FindingRow, row: FindingRow) -> bool:
    """Whether ``head``'s request is a repro of ``row``'s failure: it showed it, or the two
    requests share a history."""
    return _shows(head, row) or bool(head.history and row.history == head.history)


def _symptom(row: FindingRow, apart: bool) -> Symptom:
    """``row`` as one symptom of its cause; ``apart``: its bundle moves inside the head's."""
    return Symptom(
        oracle=row.oracle,
        signature=row.signature,
        message=row.message,
        seen_on=row.seen_on,
        reproduced=row.reproduced,
        repro=f"symptoms/{Path(row.bundle).name}" if apart else None,
    )


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
