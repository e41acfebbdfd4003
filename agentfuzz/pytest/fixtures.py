"""The plugin's fixtures for agentfuzz tests (see ``agentfuzz.pytest.plugin``). Like the plugin,
this module imports only the standard library and pytest at the top."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from agentfuzz.pytest.items import SETTINGS, TIMEOUT

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from agentfuzz.model.history import Case
    from agentfuzz.model.observation import Observation
    from agentfuzz.pytest.campaign import CampaignRunner
    from agentfuzz.wire.target import Target

__all__ = [
    "agentfuzz_base_url",
    "agentfuzz_campaign",
    "agentfuzz_cases",
    "agentfuzz_check",
    "agentfuzz_target",
]


@pytest.fixture(scope="session")
def agentfuzz_base_url(pytestconfig: pytest.Config) -> str | None:
    """The live server given with ``--agentfuzz-base-url``, or None (offline)."""
    url: str | None = pytestconfig.getoption("agentfuzz_base_url")
    return url


@pytest.fixture
def agentfuzz_target(
    agentfuzz_base_url: str | None, pytestconfig: pytest.Config
) -> Iterator[Target]:
    """An ``agentfuzz.Target`` for the live server, closed after the test; skips when offline.

    The model is ``--agentfuzz-model``, else the first one ``/models`` lists. It is function
    scoped: a ``@given`` test using it suppresses ``HealthCheck.function_scoped_fixture``.
    """
    if not agentfuzz_base_url:
        pytest.skip("needs a live server: --agentfuzz-base-url")
    from agentfuzz.errors import ModelListError, TargetUnreachable
    from agentfuzz.wire.target import Target, first_model

    key = os.environ.get("OPENAI_API_KEY")
    model: str | None = pytestconfig.getoption("agentfuzz_model")
    if model is None:
        try:
            model = first_model(agentfuzz_base_url, key, TIMEOUT)
        except (ModelListError, TargetUnreachable) as exc:
            pytest.fail(f"{exc}; pass --agentfuzz-model", pytrace=False)
    target = Target(agentfuzz_base_url, model, key, TIMEOUT)
    yield target
    target.close()


@pytest.fixture
def agentfuzz_campaign(request: pytest.FixtureRequest, tmp_path: Path) -> CampaignRunner:
    """``(*, seed, profile="default", modes=(("chat", False),), kinds=("synthetic",),
    max_examples=20, trials=1, cassettes=None)`` -> the ``agentfuzz.Report`` of a seeded campaign.

    Offline it replays the campaign from the item's cassettes (``cassettes``, default
    ``<test folder>/cassettes/<module stem>/<test name>/``); live it fuzzes the server,
    recording under ``--agentfuzz-record-mode`` (``none``: no cassettes). Bundles go under
    ``tmp_path``. See ``agentfuzz.pytest.campaign``.
    """
    from agentfuzz.pytest.campaign import CampaignRunner

    found = request.config.stash[SETTINGS]
    item = request.node
    assert isinstance(item, pytest.Item)
    return CampaignRunner(
        item, tmp_path / "agentfuzz", found.base_url, found.model, found.record_mode
    )


@pytest.fixture(scope="session")
def agentfuzz_cases() -> Callable[..., SearchStrategy[Case]]:
    """``(profile="default", api="chat", stream=False)`` -> a Hypothesis strategy of ``Case``."""
    from agentfuzz.request.profiles import load_profile
    from agentfuzz.strategies import cases

    def strategy(
        profile: str = "default", api: str = "chat", stream: bool = False
    ) -> SearchStrategy[Case]:
        return cases(load_profile(profile), api, stream)  # type: ignore[arg-type]

    return strategy


@pytest.fixture(scope="session")
def agentfuzz_check() -> Callable[..., None]:
    """``(case, observation, only=None, skip=())``: run the oracles, fail listing violations."""
    from agentfuzz.judge import judge

    def check(
        case: Case,
        observation: Observation,
        only: Collection[str] | None = None,
        skip: Collection[str] = (),
    ) -> None:
        found = judge.check(case, observation, only, skip)
        if found:
            listed = "\n".join(f"  {v.oracle}: {v.message}" for v in found)
            raise AssertionError(f"{len(found)} oracle violation(s):\n{listed}")

    return check
