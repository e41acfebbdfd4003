"""The engine tells a progress display what it does, and a run in a thread can be stopped."""

from __future__ import annotations

from pathlib import Path

from agentfuzz import FuzzConfig, Status, run
from agentfuzz.reference import serve_in_thread
from agentfuzz.request.profiles import load_profile
from agentfuzz.runs.campaign import run_unfolded

from .quality.planted_server import BUGS, planted_server

PLANTED = ["empty_on_foreign_id", "leak_without_tools"]


def _config(url: str, out: Path) -> FuzzConfig:
    return FuzzConfig(
        base_url=url,
        model="m",
        profile=load_profile("default"),
        out=out,
        modes=(("chat", False),),
        max_examples=150,
        seed=5,
        database=None,
    )


def test_progress_follows_examples_failures_and_shrinking(tmp_path: Path) -> None:
    seen: list[Status] = []
    with planted_server(PLANTED) as url:
        # The engine's findings, one per distinct failure, as progress counts them (unfolded).
        report = run_unfolded(_config(url, tmp_path), seen.append)
    examples = [s.examples for s in seen]
    assert examples == sorted(examples)
    assert examples[-1] == sum(report.examples.values())
    oracle = BUGS[PLANTED[0]].oracle
    assert oracle in seen[-1].by_oracle()
    assert set(seen[-1].failures) == {f.violation.key for f in report.findings}
    # The shrinker's steps were shown as they happened, down to the size the bundle has.
    (finding,) = [f for f in report.findings if f.violation.oracle == oracle]
    sizes = [s.shrinking[1] for s in seen if s.shrinking and s.shrinking[0] == oracle]
    assert sizes and min(sizes) == finding.case.history.size
    assert {"chat/no-stream", "shrink", "confirm"} <= {s.phase for s in seen}


def test_a_stopped_run_ends_early_and_keeps_what_it_found(tmp_path: Path) -> None:
    seen: list[Status] = []

    def stop() -> bool:  # as a thread's Ctrl-C: once the first failure is in
        return bool(seen and seen[-1].failures)

    with planted_server(PLANTED) as url:
        report = run(_config(url, tmp_path), seen.append, stop)
    assert report.interrupted
    assert report.findings and all(f.bundle.is_dir() for f in report.findings)
    # Counted up to where it stopped, in the mode it stopped in.
    assert 0 < report.examples["chat/no-stream"] < 150


def test_kinds_run_in_the_order_given(tmp_path: Path) -> None:
    seen: list[Status] = []
    update = {"kinds": ("session", "synthetic"), "max_examples": 3}
    config = _config("", tmp_path).model_copy(update=update)
    with serve_in_thread("fixed") as url:
        report = run(config.model_copy(update={"base_url": url}), seen.append)
    assert seen[0].phase == "session chat/no-stream"
    assert seen[-1].phase == "chat/no-stream"
    assert list(report.examples) == ["session chat/no-stream", "chat/no-stream"]
