"""The plugin's fixtures, its shared Hypothesis database, its network guard, its import cost."""

from __future__ import annotations

import ast
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agentfuzz.pytest import items as pytest_items
from agentfuzz.pytest import plugin as pytest_plugin

HEAVY = ["httpx", "vcr", "hypothesis", "pydantic"]

FIXTURE_TESTS = """
from hypothesis import HealthCheck, given, settings, strategies as st

from agentfuzz.model.history import Case, History, UserMessage
from agentfuzz.model.observation import Exchange, Observation


def test_base_url(agentfuzz_base_url, pytestconfig):
    assert agentfuzz_base_url == pytestconfig.getoption("agentfuzz_base_url")


@settings(max_examples=3, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_target_answers_generated_cases(agentfuzz_target, agentfuzz_cases, agentfuzz_check, data):
    case = data.draw(agentfuzz_cases("default", "responses", True))
    assert case.api == "responses" and case.stream
    agentfuzz_check(case, agentfuzz_target.observe(case))


def test_check_lists_violations(agentfuzz_check):
    case = Case(history=History(items=(UserMessage(text="hi"),)))
    empty = Observation(Exchange("http://h/v1/chat/completions", {}, False, 200,
                                 "application/json", "{}"))
    try:
        agentfuzz_check(case, empty, only=["empty_turn"])
    except AssertionError as exc:
        assert "empty_turn:" in str(exc)
    else:
        raise AssertionError("an empty answer passed the oracles")
    agentfuzz_check(case, empty, skip=["empty_turn", "wire_schema", "error"])
"""


def test_fixtures_against_a_live_server(pytester: pytest.Pytester, fixed_url: str) -> None:
    pytester.makepyfile(test_mine=FIXTURE_TESTS)
    pytester.runpytest("--agentfuzz-base-url", fixed_url).assert_outcomes(passed=3)


def test_the_target_fixture_skips_offline(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_mine=FIXTURE_TESTS)
    result = pytester.runpytest("-rs")
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(["*needs a live server: --agentfuzz-base-url*"])


PROFILE_TEST = """
from hypothesis import settings

def test_profile(pytestconfig):
    current = settings.get_current_profile_name()
    print("PROFILE", current, getattr(settings().database, "path", None))
"""


@pytest.fixture(autouse=True)
def _not_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis picks its "ci" profile itself when it sees a CI variable: start outside CI."""
    from hypothesis._settings import _CI_VARS

    for name in _CI_VARS:
        monkeypatch.delenv(name, raising=False)


def _profile(pytester: pytest.Pytester, *args: str) -> str:
    pytester.makepyfile(test_profile=PROFILE_TEST)
    result = pytester.runpytest_subprocess("-s", *args)
    result.assert_outcomes(passed=1)
    line = next(line for line in result.outlines if "PROFILE " in line)
    return line.split("PROFILE ", 1)[1]


def test_hypothesis_shares_one_example_database(pytester: pytest.Pytester) -> None:
    shared = pytester.path / ".agentfuzz" / "examples"
    assert _profile(pytester) == f"agentfuzz {shared}"


def test_a_profile_the_user_chose_is_kept(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        "from hypothesis import settings\nsettings.register_profile('mine', max_examples=5)\n"
    )
    assert _profile(pytester, "--hypothesis-profile=mine").startswith("mine ")
    pytester.makeini("[pytest]\nagentfuzz_shared_database = false\n")
    assert _profile(pytester).startswith("default ")


def test_the_ci_profile_hypothesis_picks_is_kept(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    assert _profile(pytester) == "ci None"


def test_offline_replay_cannot_connect(kimi_url: str) -> None:
    port = int(kimi_url.rsplit(":", 1)[1].split("/")[0])
    with pytest_items._no_network(), pytest.raises(pytest_plugin.NetworkBlocked, match="offline"):
        socket.create_connection(("127.0.0.1", port), timeout=5)
    # Restored afterwards, and local (non-IP) sockets were never blocked.
    socket.create_connection(("127.0.0.1", port), timeout=5).close()
    assert "connect" not in vars(socket.socket)
    with pytest_items._no_network():
        left, right = socket.socketpair()
        left.close(), right.close()


@pytest.mark.parametrize("module", HEAVY)
def test_importing_the_plugin_is_light(module: str) -> None:
    code = f"import sys, agentfuzz.pytest.plugin; print({module!r} in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _top_imports(path: Path) -> set[str]:
    top = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            top |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            top.add(node.module)
    return top


_PLUGIN_PARTS = {"agentfuzz.model.accepted", "agentfuzz.pytest.items", "agentfuzz.pytest.fixtures"}


@pytest.mark.parametrize("part", ["plugin", "items", "fixtures"])
def test_the_plugin_imports_only_stdlib_pytest_and_its_own_parts_at_the_top(part: str) -> None:
    top = _top_imports(Path(pytest_plugin.__file__).with_name(f"{part}.py"))
    ours = {name for name in top if name.split(".")[0] == "agentfuzz"}
    assert ours <= _PLUGIN_PARTS
    assert {name.split(".")[0] for name in top - ours} - {"pytest"} <= sys.stdlib_module_names
    # What the options module needs is the standard library alone.
    options = Path(pytest_plugin.__file__).parents[1] / "model" / "accepted.py"
    assert {name.split(".")[0] for name in _top_imports(options)} <= sys.stdlib_module_names
