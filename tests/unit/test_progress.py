"""What a person watching a run reads: failures per oracle, the shrink under way, shard merges."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from agentfuzz.cli.progress import ProgressLine, failures_text, shrink_text
from agentfuzz.model.history import Case, History, UserMessage
from agentfuzz.model.observation import Exchange, Observation, Violation
from agentfuzz.output.findings.status import Status
from agentfuzz.output.findings.store import FindingStore
from agentfuzz.runs.workers import groups, merged_status

EMPTY = Violation("empty_turn", "nothing", "", "empty_turn")


def _case(n: int) -> Case:
    return Case(history=History(items=tuple(UserMessage(text=str(i)) for i in range(n))))


def _obs() -> Observation:
    return Observation(Exchange("http://127.0.0.1:9/v1/chat/completions", {}, False, 200, "{}"))


def test_failures_are_counted_per_oracle_most_first() -> None:
    keys = (("error", "a"), ("empty_turn", "x"), ("error", "b"))
    assert failures_text(Status("chat/no-stream", 3, keys)) == "error 2, empty_turn 1"
    assert failures_text(Status("chat/no-stream", 3)) == "no failures"


def test_the_store_says_which_failure_got_smaller_and_to_what() -> None:
    store = FindingStore(Path("out"))
    store.offer(EMPTY, _case(5), _obs())
    assert store.status("shrink", 7).shrinking is None  # found, not yet shrunk
    store.offer(EMPTY, _case(3), _obs())
    store.offer(EMPTY, _case(4), _obs())  # larger than the best: not a shrink step
    status = store.status("shrink", 7)
    assert status.shrinking == ("empty_turn", 3)
    assert status.failures == (EMPTY.key,)
    assert shrink_text(status) == "shrunk empty_turn to 3"


def test_groups_put_about_one_item_on_each_core() -> None:
    assert groups(8, 2) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert groups(3, 2) == [[0, 1], [2]]
    assert groups(2, 8) == [[0], [1]]
    assert groups(5, 1) == [[0, 1, 2, 3, 4]]
    assert sorted(k for g in groups(7, 3) for k in g) == list(range(7))


def _beacon(folder: Path, shard: int, data: dict[str, object]) -> None:
    (folder / str(shard)).mkdir(parents=True)
    (folder / str(shard) / "progress.json").write_text(json.dumps(data))


def test_shard_progress_files_merge_into_one_status(tmp_path: Path) -> None:
    assert merged_status(tmp_path) is None
    _beacon(tmp_path, 0, {"phase": "chat/no-stream", "examples": 40, "at": 1.0,
                          "failures": [["error", "a"]], "shrinking": ["error", 6]})  # fmt: skip
    _beacon(tmp_path, 1, {"phase": "shrink", "examples": 25, "at": 2.0,
                          "failures": [["error", "a"], ["empty_turn", "x"]],
                          "shrinking": ["empty_turn", 4]})  # fmt: skip
    (tmp_path / "2").mkdir()
    (tmp_path / "2" / "progress.json").write_text('{"phase": ')  # caught mid-write: skipped
    status = merged_status(tmp_path)
    assert status is not None
    assert status.examples == 65
    assert status.by_oracle() == {"empty_turn": 1, "error": 1}  # the same failure counts once
    assert status.shrinking == ("empty_turn", 4)  # the latest shrink step of any shard
    assert status.phase == "2 shards: chat/no-stream, shrink"


def test_the_progress_line_shows_failures_and_shrink_size() -> None:
    sink = io.StringIO()
    console = Console(file=sink, force_terminal=True, width=200)
    with ProgressLine(console, total=100) as watch:
        watch(Status("chat/stream", 12, (EMPTY.key,), ("empty_turn", 4)))
        watch._bar.refresh()
        shown = sink.getvalue()
    assert "chat/stream" in shown and "12 examples" in shown
    assert "empty_turn 1" in shown and "shrunk empty_turn to 4" in shown
    quiet = io.StringIO()
    with ProgressLine(Console(file=quiet, force_terminal=True), total=100, quiet=True) as watch:
        watch(Status("chat/stream", 12))
    assert quiet.getvalue() == ""
