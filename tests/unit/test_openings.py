"""A run's openings: each skeleton's plainest case, judged before Hypothesis draws at random, so
every id shape meets every ending of the agent loop early in every run, whatever the seed
(issue 41 item 11: two seed bugs were met within 50 examples on some seeds and not others)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from agentfuzz.model.history import AssistantMessage, Case, UserMessage
from agentfuzz.model.modes import ALL_MODES
from agentfuzz.model.observation import Violation
from agentfuzz.request import ids
from agentfuzz.request.profiles import Profile
from agentfuzz.runs.passes import fuzz_mode
from agentfuzz.strategies import openings
from agentfuzz.strategies._options import skeletons

DEFAULT = Profile()


def _last_id(case: Case) -> str:
    return case.history.calls[-1].id


def test_every_id_shape_meets_every_ending_once() -> None:
    found = [case for case, _ in openings(DEFAULT, "chat", False, ALL_MODES)]
    assert len(found) == skeletons(DEFAULT) - 1 == 3 * len(DEFAULT.family_strata)
    endings = set()
    for case in found:
        items = case.history.items
        # The loop goes on: an assistant reply with calls, their results, the user's next ask.
        assert isinstance(items[-1], UserMessage)
        assert any(isinstance(i, AssistantMessage) and i.tool_calls for i in items)
        stratum = next(
            k for k, s in enumerate(DEFAULT.family_strata) if ids.recognize(_last_id(case)) in s
        )
        named = items[-1].text.count(" and ") + 1
        endings.add((stratum, named, case.options.include_tools))
    strata = range(len(DEFAULT.family_strata))
    assert endings == {(k, n, d) for k in strata for n, d in ((1, True), (2, True), (1, False))}


def test_the_openings_are_the_plainest_of_their_kind() -> None:
    """Seed 000's first fix's request among them, as plain as it comes: one call whose id is
    ``name:N`` without ``functions.``, its result, and the ask naming that tool again."""
    found = [case for case, _ in openings(DEFAULT, "chat", False, ALL_MODES)]
    bare = [c for c in found if _last_id(c) == "get_weather:0"]
    plain = [c for c in bare if c.options.include_tools and "and" not in c.history.items[-1].text]
    assert len(plain) == 1
    case = plain[0]
    assert [type(i).__name__ for i in case.history.items] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResult",
        "UserMessage",
    ]
    assert case.options.fields == {} and case.relation is None


def test_no_openings_where_the_profile_allows_no_loop() -> None:
    assert openings(Profile(max_parallel_calls=0), "chat", False, ALL_MODES) == []


def test_an_openings_choices_draw_it_again() -> None:
    """What the example database keeps of an opening draws the very same case."""
    from hypothesis.control import BuildContext
    from hypothesis.internal.conjecture.data import ConjectureData

    from agentfuzz.strategies import cases

    for case, choices in openings(DEFAULT, "responses", True, ALL_MODES)[:6]:
        data = ConjectureData.for_choices(choices)
        with BuildContext(data, wrapped_test=None):  # type: ignore[arg-type]
            assert data.draw(cases(DEFAULT, "responses", True, ALL_MODES)) == case


def _fuzz(
    openers: list[Any], judge: Any, max_examples: int, seen: list[str], database: Any = None
) -> None:
    fuzz_mode(
        st.integers(0, 10**6),
        judge,
        on_example=lambda: seen.append("example"),
        on_shrink=lambda: None,
        on_failure=lambda: seen.append("failure"),
        on_pass=lambda _: None,
        max_examples=max_examples,
        seed=None,
        database=database,
        db_key="openings",
        openers=openers,
    )


def test_openers_go_first_within_the_budget() -> None:
    judged: list[Any] = []

    def judge(example: Any) -> list[Violation]:
        judged.append(example)
        return []

    seen: list[str] = []
    _fuzz([("opener-a", ()), ("opener-b", ())], judge, 20, seen)
    assert judged[:2] == ["opener-a", "opener-b"]
    assert seen.count("example") == 20
    assert all(isinstance(e, int) for e in judged[2:])


def test_openers_take_at_most_half_the_budget() -> None:
    judged: list[Any] = []
    seen: list[str] = []
    openers = [(f"opener-{n}", ()) for n in range(10)]
    _fuzz(openers, lambda e: judged.append(e) or [], 6, seen)
    assert [e for e in judged if isinstance(e, str)] == ["opener-0", "opener-1", "opener-2"]
    assert seen.count("example") == 6


def test_what_an_opener_finds_is_saved_for_the_next_run(tmp_path: Path) -> None:
    """With the example database on, a failing opener's choices are kept under the first pass's
    key, so the next run replays it first whatever its budget (Hypothesis saves its own so)."""
    from hypothesis.database import DirectoryBasedExampleDatabase, choices_to_bytes

    from agentfuzz.runs._openers import database_key

    def judge(example: Any) -> list[Violation]:
        failed = example in ("opener-b", 7)  # 7: what the opener's choices draw here
        return [Violation(oracle="error", signature="s", message="m")] if failed else []

    _fuzz([("opener-a", (1,)), ("opener-b", (7,))], judge, 4, [], tmp_path)
    saved = set(DirectoryBasedExampleDatabase(str(tmp_path)).fetch(database_key("openings")))
    assert saved == {choices_to_bytes((7,))}


def test_a_scripted_mode_opens_with_each_trap_of_its_format() -> None:
    """``--puppet``: one call plain, then a value holding each of the format's markers (where its
    grammar keeps one in a value), other values, prose, two calls; each writable, each once."""
    from agentfuzz.puppet.formats import FORMATS
    from agentfuzz.puppet.scripted import carried
    from agentfuzz.strategies._puppet_openings import puppet_openings

    for name, fmt in FORMATS.items():
        opened = puppet_openings(fmt, "chat", False)
        scripts = [carried(case.options.fields) for case, choices in opened]
        assert all(found is not None for found in scripts) and opened[0][1] is None
        written = [found[1] for found in scripts if found is not None]
        assert written[0].calls[0].arguments == {}, name
        assert len({repr(s) for s in written}) == len(written), name
    hermes = [
        carried(c.options.fields) for c, _ in puppet_openings(FORMATS["hermes"], "chat", False)
    ]
    values = [str(s[1].calls[0].arguments) for s in hermes if s is not None]
    assert any("</tool_call>" in v for v in values)


def test_of_a_runs_shards_only_the_first_sends_the_openings(tmp_path: Path) -> None:
    """The openings are the same requests whatever the seed: with ``--workers 64`` every shard
    sending them would be 64 times the same sixteen requests per mode."""
    from agentfuzz import FuzzConfig
    from agentfuzz.runs._shard import _config
    from agentfuzz.runs.config import ShardSpec

    config = FuzzConfig(base_url="http://x/v1", model="m", profile=DEFAULT, out=tmp_path, seed=1)
    spec = ShardSpec(config=config, workers=3, groups=[[0], [1], [2]])
    assert [_config(spec, k).openings for k in range(3)] == [True, False, False]
