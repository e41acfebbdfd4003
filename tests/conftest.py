"""Every test runs in its own empty working directory.

``agentfuzz fuzz`` keeps its example database in ``./.agentfuzz`` and writes bundles under
``./agentfuzz-out`` by default; a fresh directory per test keeps one test's saved failures from
replaying in another (two tests can get the same loopback port one after the other).
"""

from collections.abc import Iterator
from pathlib import Path

# Loaded once, before any test: ``pytester`` unloads the modules a test imported first, and an
# httpcore loaded inside such a test leaves httpx mapping errors to classes no longer loaded
# (a refused connection then escapes as an internal error in the next test of the process).
import httpcore  # noqa: F401
import pytest


@pytest.fixture(autouse=True)
def _own_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)


@pytest.fixture(autouse=True)
def _no_secrets_from_another_test() -> Iterator[None]:
    """The secrets a run masks are the process's (``model.secrets``): one test's key is not
    another's to mask."""
    yield
    from agentfuzz.model.secrets import forget_all

    forget_all()


# The slow lane: end-to-end runs that repeat what a faster test of the same kind already shows
# in the fast lane (one more seed profile found and shrunk, one more fixed profile silent, one
# more stage a run is stopped in, one more planted fault), listed here so the choice reads in
# one place: file -> test -> its slow parameter ids (empty: every one). Files whose every test
# is slow say so themselves (``pytestmark``). The README's test command leaves the slow lane
# out (``-m "not slow"``); ``.ci/run`` runs it after.
SLOW: dict[str, dict[str, tuple[str, ...]]] = {
    "tests/reference/test_fuzz_seed_profiles.py": {
        "test_each_seed_bug_is_found_and_shrunk": (
            "vllm-kimi-k2-responses-True-empty_turn-4",
            "vllm-kimi-k2-chat-True-index_gap-None",
            "vllm-kimi-k2-loose-fix-chat-False-empty_turn-4",
            "exo-kimi-k2-chat-True-error-4",
            "exo-kimi-k2-chat-False-error-4",
            "vllm-responses-regen-responses-True-identity-None",
            "vllm-gpt-oss-responses-True-identity-None",
        ),
        "test_fixed_profiles_stay_silent": (
            "fixed-chat-True",
            "fixed-responses-False",
            "fixed-responses-True",
            "vllm-kimi-k2-fixed-chat-False",
            "vllm-kimi-k2-fixed-chat-True",
            "vllm-kimi-k2-fixed-responses-False",
            "vllm-kimi-k2-fixed-responses-True",
            "exo-kimi-k2-fixed-chat-False",
            "exo-kimi-k2-fixed-chat-True",
            "exo-kimi-k2-fixed-responses-False",
            "exo-kimi-k2-fixed-responses-True",
            "vllm-gpt-oss-fixed-chat-False",
            "vllm-gpt-oss-fixed-chat-True",
            "vllm-gpt-oss-fixed-responses-False",
            "vllm-gpt-oss-fixed-responses-True",
        ),
        "test_seed_000_loose_fix_needs_a_near_native_id": (),
    },
    "tests/quality/test_find_and_shrink.py": {
        "test_finds_and_shrinks_each_planted_bug": (
            "echo_bad_args",
            "empty_on_foreign_id",
            "finish_without_calls",
            "gap_after_dropped",
            "ignore_choice_none",
            "leak_without_tools",
            "regen_ids",
            "truncate_dotted",
            "crash_on_parallel",
        ),
        "test_a_correct_server_yields_no_findings": ("chat-True",),
    },
    "tests/reference/test_sessions.py": {
        "test_failure_rate_climbs_with_turn_number_at_temperature": (),
        "test_seed_001_sanitized_native_ids_make_the_parser_raise": ("--stream-exo-kimi-k2",),
        "test_fixed_profiles_stay_clean_over_400_sessions": (
            "vllm-kimi-k2-fixed",
            "exo-kimi-k2-fixed",
        ),
        "test_mode_both_runs_histories_and_sessions_and_prints_the_turn_table": (),
    },
    "tests/reference/test_knob_planted.py": {
        "test_an_ignored_knob_is_found_and_shrunk_to_that_knob": (
            "n-ignored-chat-False-0-knob:n-n-2",
            "stop-ignored-chat-False-13-knob:stop-stop- ",
            "logprobs-ignored-chat-True-3-knob:logprobs:missing-logprobs-True",
            "usage-chunk-ignored-chat-True-3-knob:include_usage:count-stream_options-value4",
            "budget-ignored-responses-False-0-knob:budget-max_output_tokens-1",
            "budget-ignored-responses-True-0-knob:budget-max_output_tokens-1",
            "json-format-ignored-chat-False-4-knob:response_format:not_json-response_format-value7",
            "json-format-ignored-responses-False-3-knob:response_format:not_json-text-value8",
        ),
        "test_the_fixed_profile_keeps_to_every_budget_it_accepts": ("responses",),
    },
    "tests/test_stopping.py": {
        "test_a_run_stopped_in_any_stage_reports_and_keeps_what_it_found": (
            "session-target-stop",
            "session-target-deadline",
            "session-target-sigint",
        ),
    },
    "tests/reference/test_relation_planted.py": {
        "test_pairs_run_with_several_workers": (),
        "test_a_planted_misreading_is_found_and_shrunk_as_a_pair": (
            "results-cut-tool_result-chat-3-1-3",
            "special-tokens-read-special_token-responses-1-0-3",
            "required-one-call-required_calls-chat-1-2-4",
        ),
    },
    "tests/quality/test_surface_planted.py": {
        "test_a_stop_inside_markup_is_found_and_shrunk_to_one_stop": ("True",),
        "test_a_crash_on_a_server_extension_is_found_once_the_profile_names_it": ("responses",),
    },
    "tests/test_workers.py": {
        "test_a_shard_killed_mid_run_still_has_its_bundles_merged": (),
        "test_shards_sharing_one_process_as_threads_find_the_same": (),
        "test_two_workers_find_what_one_finds_in_one_summary": (),
    },
    "tests/test_fuzz_contract.py": {
        "test_every_distinct_failure_is_reported_and_shrunk_on_its_own": (),
        "test_found_by_is_a_command_that_finds_the_same_failures_again": (),
    },
    "tests/test_run_progress.py": {
        "test_progress_follows_examples_failures_and_shrinking": (),
    },
    "tests/reference/test_record_replay.py": {
        "test_a_bundles_test_file_documents_the_bug_and_becomes_its_regression_test": (),
    },
    "tests/reference/test_reduce_command.py": {
        "test_against_a_stochastic_server_auto_trials_reach_the_minimum_with_an_honest_rate": (),
    },
    "tests/watch/test_proxy_cli.py": {
        "test_a_codex_like_session_is_caught_kept_on_ctrl_c_and_reduced": (),
    },
    "tests/unit/test_surface.py": {
        "test_every_dimension_is_reached_and_shrinks_to_its_field_alone": ("stop-chat",),
    },
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path, _, test = item.nodeid.partition("::")
        name, _, param = test.partition("[")
        params = SLOW.get(path, {}).get(name)
        if params is not None and (not params or param[:-1] in params):
            item.add_marker(pytest.mark.slow)
