"""After a repro is reduced: make it one a maintainer acts on, and say what it shows.

Three steps, each re-sending the repro and keeping a change only while the failure still fires:

1. **valid**: repaired toward a conversation the API accepts (``validity.repair``); the rules the
   failure needs stay broken, and are named; an item the repair made removable (a turn that
   mattered only while it was empty) is then dropped;
2. **where**: re-sent on every other mode of the run, so the bundle says which modes it
   reproduces on; a streamed repro that fails as well without streaming becomes the plain
   request (unless step 3 ties it to the mode that minted its ids), which a maintainer reads
   without SSE noise;
3. **how**: when the run saw this server mint call ids of its own, the repro's ids are replaced
   by ids the server minted, mode by mode (the repro's own first), and the first mode where the
   failure still fires becomes the repro's: a client that feeds a server's own ids back meets
   the fault, and the bundle shows those very ids. When the server minted no call of the
   repro's one tool, the tool takes the name of one it did mint calls for, so the history
   holds the server's own call, name and id;
4. **why**: for each known shape the server minted ids in during the run (Kimi's
   ``functions.NAME:IDX`` on chat completions, say) that the repro's ids are not in, the repro
   is re-sent with its ids re-minted in that shape of the server's own; when the failure then
   does not fire (twice running, while the repro as it was fires again right after), the trigger
   is the shape of the history's call ids, and the bundle says so (``cleared_by``). Failures
   one shape clears are one cause to ``findings.fold``: the fix that makes history ids the
   server's own removes them all.

Pure: it sends through the callable it is given and writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentfuzz.model.history import AssistantMessage, Case, UserMessage
from agentfuzz.model.modes import Mode
from agentfuzz.model.modes import label as _label
from agentfuzz.model.observation import Observation
from agentfuzz.reduce.reduction import renamed, well_formed, with_items
from agentfuzz.reduce.validity import flaws, repair
from agentfuzz.request.ids import FAMILIES, entropy, format_id, recognize

__all__ = ["Explained", "Minted", "explain", "note_minted"]

# Per mode label (``responses/stream``): (tool name, call id) of each call the server minted.
Minted = Mapping[str, Sequence[tuple[str, str]]]
# What fires the failure once (or K times) on a case: the answer it fired on, or None.
Fires = Callable[[Case], Observation | None]


@dataclass(frozen=True)
class Explained:
    """The repro after explaining, and what was learnt on the way."""

    case: Case
    # The answer the final case fired on; None when the case did not change.
    observation: Observation | None
    needs: tuple[str, ...]
    reproduces_on: tuple[str, ...]
    mechanism: dict[str, Any] | None
    # The server's own id shape that stops the failure (``why`` in the module's docstring).
    cleared_by: dict[str, Any] | None = None


def note_minted(minted: dict[str, list[tuple[str, str]]], case: Case, obs: Observation) -> None:
    """Keep in ``minted`` a few of the call ids a 2xx answer to ``case`` minted, per mode and
    tool: the shapes ``explain`` later tries a repro's ids in."""
    status = obs.exchange.status
    if status is None or not 200 <= status < 300:
        return
    kept = minted.setdefault(_label((case.api, case.stream)), [])
    for call in obs.tool_calls:
        new = call.call_id or call.id
        name = call.flat_name  # as a history's calls name their tool
        if new and name and (name, new) not in kept and [n for n, _ in kept].count(name) < 4:
            kept.append((name, new))


def _moved(case: Case, api: str, stream: bool, ids: Mapping[str, str] | None = None) -> Case:
    if ids:
        case = with_items(case, [renamed(it, ids) for it in case.history.items])
    return case.model_copy(update={"api": api, "stream": stream})


def _minted_ids(case: Case, minted: Sequence[tuple[str, str]]) -> dict[str, str] | None:
    """Each call's id mapped to a distinct id the server minted for a call of the same tool,
    or None when some call has none."""
    pool: dict[str, list[str]] = {}
    for name, call_id in minted:
        if call_id not in pool.setdefault(name, []):
            pool[name].append(call_id)
    ids: dict[str, str] = {}
    for call in case.history.calls:
        if call.id in ids:
            continue
        left = [i for i in pool.get(call.flat_name, []) if i not in ids.values()]
        if not left:
            return None
        ids[call.id] = call.id if call.id in left else left[0]
    return ids


def _trimmed(case: Case, still: Callable[[Case], bool]) -> Case:
    """``case`` less each item whose removal keeps it well formed, breaks no new rule and
    still fails: one at a time, until none goes. The last user message stays: a conversation
    reads as one when somebody asked for something."""
    broken = set(flaws(case))

    def asks(c: Case) -> bool:
        return any(isinstance(it, UserMessage) for it in c.history.items)

    dropped = True
    while dropped:
        dropped = False
        items = case.history.items
        for i in range(len(items)):
            rest = items[:i] + items[i + 1 :]
            candidate = with_items(case, rest)
            fit = well_formed(candidate) and set(flaws(candidate)) <= broken
            if fit and (asks(candidate) or not asks(case)) and still(candidate):
                case, dropped = candidate, True
                break
    return case


def _own_shapes(case: Case, minted: Minted) -> Iterator[tuple[str, str, dict[str, str]]]:
    """Each known shape the server minted ids in (with the first mode that minted it) that the
    repro's ids do not all have, and the repro's ids re-minted in it (numbered in order, as
    Kimi counts)."""
    calls = list({c.id: c for c in case.history.calls}.values())
    shapes: dict[str, str] = {}
    for label in sorted(minted):
        for _, call_id in minted[label]:
            shape = recognize(call_id)
            if shape in FAMILIES:
                shapes.setdefault(shape, label)
    for shape, label in shapes.items():
        if all(recognize(c.id) == shape for c in calls):
            continue
        ids = {c.id: format_id(shape, c.flat_name, n, entropy(n)) for n, c in enumerate(calls)}
        yield label, shape, ids


def _adopting(case: Case, pool: Sequence[tuple[str, str]]) -> Iterator[Case]:
    """``case`` itself, then, when its calls all name one tool the server minted no call for,
    ``case`` with that tool renamed to each tool the server did mint calls for (declaration,
    calls and a ``tool_choice`` naming it): a client feeding back the server's own call, name
    and id, is the plainest story, and ``_fed_back`` keeps it only while the failure fires."""
    yield case
    names = {c.flat_name for c in case.history.calls}
    # Plain names before namespaced ones (``ns__name``): the plainer story.
    minted_names = sorted(dict.fromkeys(name for name, _ in pool), key=lambda n: "__" in n)
    if len(names) != 1 or names <= set(minted_names):
        return
    (old,) = names
    declared = {t.flat_name for t in case.history.tools}
    for new in (n for n in minted_names if n not in declared):
        tools = tuple(
            t.model_copy(update={"name": new, "namespace": None}) if t.flat_name == old else t
            for t in case.history.tools
        )
        items = tuple(
            it.model_copy(
                update={
                    "tool_calls": tuple(
                        c.model_copy(update={"name": new, "namespace": None}) for c in it.tool_calls
                    )
                }
            )
            if isinstance(it, AssistantMessage) and it.tool_calls
            else it
            for it in case.history.items
        )
        choice = new if case.options.tool_choice == old else case.options.tool_choice
        yield case.model_copy(
            update={
                "history": case.history.model_copy(update={"tools": tools, "items": items}),
                "options": case.options.model_copy(update={"tool_choice": choice}),
            }
        )


def _fed_back(
    case: Case, on: list[Mode], fires: Fires, minted: Minted, fired: Observation | None
) -> tuple[Case, dict[str, Any] | None, list[Mode], Observation | None]:
    """Step 3 (``how``): the first mode of ``on`` whose minted ids, put in the repro, keep it
    failing; the repro, its mechanism and its modes (that one first) after it."""
    if not case.history.calls:
        return case, None, on, fired
    own = on[0]
    for api, stream in on:
        pool = minted.get(_label((api, stream)), ())
        for candidate in _adopting(case, pool):
            ids = _minted_ids(candidate, pool)
            if ids is None:
                continue
            moved = _moved(candidate, api, stream, ids)
            unchanged = moved == _moved(case, *own)
            obs = None if unchanged else fires(moved)
            if not unchanged and obs is None:
                continue
            if obs is not None:
                case, fired = moved, obs
            mechanism = {"minted_on": _label((api, stream)), "ids": sorted(set(ids.values()))}
            return case, mechanism, [(api, stream)] + [m for m in on if m != (api, stream)], fired
    return case, None, on, fired


def explain(case: Case, fires: Fires, modes: Sequence[Mode], minted: Minted) -> Explained:
    """``case`` made valid where the failure allows, the modes it reproduces on, and how its
    call ids came about (see the module's docstring)."""
    seen: Observation | None = None

    def still(candidate: Case) -> bool:
        nonlocal seen
        obs = fires(candidate)
        if obs is not None:
            seen = obs
        return obs is not None

    repaired, needs = repair(case, still)
    if repaired != case:
        repaired = _trimmed(repaired, still)
        needs = flaws(repaired)
    case, fired = repaired, seen
    own = (case.api, case.stream)
    answers = {m: fires(_moved(case, *m)) for m in modes if m != own}
    on = [own] + [m for m, obs in answers.items() if obs is not None]
    case, mechanism, on, fired = _fed_back(case, on, fires, minted, fired)
    plain = (case.api, False)
    if mechanism is None and answers.get(plain) is not None:
        # Failing streamed and not, the plain request makes the repro: no SSE noise to read.
        # (A mechanism keeps its mode: the one whose minted ids the repro shows.)
        case, fired = _moved(case, *plain), answers[plain]
        on = [plain] + [m for m in on if m != plain]
    cleared_by = None
    for label, shape, ids in _own_shapes(case, minted):
        own_ids = _moved(case, case.api, case.stream, ids)
        # Twice quiet with the server's shape, and firing again as it was right after: a server
        # that went slow or silent meanwhile clears nothing.
        if fires(own_ids) is None and fires(own_ids) is None and fires(case) is not None:
            cleared_by = {"shape": shape, "minted_on": label, "ids": sorted(set(ids.values()))}
            break
    return Explained(
        case=case,
        observation=fired,
        needs=needs,
        reproduces_on=tuple(_label(m) for m in on),
        mechanism=mechanism,
        cleared_by=cleared_by,
    )
