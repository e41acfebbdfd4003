"""The agentfuzz pytest plugin: recorded cassettes as test items, and fixtures for agentfuzz tests.

Every ``*.yaml``/``*.yml`` under the cassettes folder (``--agentfuzz-cassettes DIR``, ini
``agentfuzz_cassettes``, default ``cassettes`` in the rootdir) is one test item:

- offline (the default): the cassette is replayed through agentfuzz's client pipeline, bodies
  re-split at random byte boundaries (``--agentfuzz-seed N``), and every oracle runs again. The
  item passes when each turn gives the verdicts recorded with it, bugs included: a cassette that
  recorded a bug documents it. Sockets cannot connect while it runs.
- live (``--agentfuzz-base-url URL [--agentfuzz-model NAME]``): each recorded request is sent
  again to the server and judged by every oracle. The item passes when no oracle fires, so a
  cassette that recorded a bug fails until the server is fixed.

``--agentfuzz-record-mode`` says what a live run does to the cassette file: ``none`` (default) and
``once`` never write it (the cassette exists already, or there would be no item); ``new_episodes``
and ``all`` rewrite it with the live exchanges and their verdicts, so the next offline run replays
what the server does now. Live mode re-sends every request, so the two differ only in name. Each
file is one item, hence written by the one pytest-xdist worker running it.

Fixtures: ``agentfuzz_base_url``, ``agentfuzz_target``, ``agentfuzz_cases``, ``agentfuzz_check``,
and ``agentfuzz_campaign`` (a seeded fuzz campaign on the test's own cassettes, see
``agentfuzz.pytest_campaign``; those cassettes are never items themselves).
Unless the user chose a Hypothesis profile (or Hypothesis chose its "ci" profile, which keeps no
database), Hypothesis tests share one example database in
``<rootdir>/.agentfuzz/examples`` (ini ``agentfuzz_shared_database = false`` turns that off).

This module is loaded by every pytest run wherever agentfuzz is installed, so it imports only the
standard library and pytest at the top; agentfuzz itself is imported where it is used.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from agentfuzz.options import RECORD_MODES, base_url_problem

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from agentfuzz.history import Case
    from agentfuzz.observation import Observation, Violation
    from agentfuzz.pytest_campaign import CampaignRunner
    from agentfuzz.target import Target

__all__ = [
    "RECORD_MODES",
    "CassetteFailure",
    "CassetteFile",
    "CassetteItem",
    "NetworkBlocked",
    "agentfuzz_base_url",
    "agentfuzz_campaign",
    "agentfuzz_cases",
    "agentfuzz_check",
    "agentfuzz_target",
]

_REWRITE = frozenset({"new_episodes", "all"})
_PROFILE_NAME = "agentfuzz"
_TIMEOUT = 60.0


@dataclass(frozen=True)
class _Settings:
    cassettes: Path
    base_url: str | None
    model: str | None
    record_mode: str
    seed: int


_SETTINGS = pytest.StashKey[_Settings]()
# The Hypothesis profile that was current before the plugin loaded its own, to restore after.
_PREVIOUS_PROFILE = pytest.StashKey[str]()


class CassetteFailure(Exception):
    """A cassette item's failure, shown as its message alone: no traceback says more."""


class NetworkBlocked(RuntimeError):
    """An offline cassette item tried to open a network connection."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentfuzz", "agentfuzz cassettes and fixtures")
    group.addoption(
        "--agentfuzz-cassettes",
        dest="agentfuzz_cassettes",
        metavar="DIR",
        help="folder whose *.yaml cassettes become test items (default: ini agentfuzz_cassettes)",
    )
    group.addoption(
        "--agentfuzz-base-url",
        dest="agentfuzz_base_url",
        metavar="URL",
        help="re-send cassettes to this live server (http://host:8000/v1) instead of replaying",
    )
    group.addoption(
        "--agentfuzz-model", dest="agentfuzz_model", metavar="NAME", help="model for live requests"
    )
    group.addoption(
        "--agentfuzz-record-mode",
        dest="agentfuzz_record_mode",
        choices=RECORD_MODES,
        default="none",
        help="live mode: new_episodes/all rewrite each cassette with the live exchanges",
    )
    group.addoption(
        "--agentfuzz-seed",
        dest="agentfuzz_seed",
        type=int,
        default=0,
        metavar="N",
        help="seed of the random body splits of offline replay (default 0)",
    )
    parser.addini(
        "agentfuzz_cassettes", "cassette folder, relative to rootdir", default="cassettes"
    )
    parser.addini(
        "agentfuzz_shared_database",
        "share one Hypothesis example database, <rootdir>/.agentfuzz/examples (default true)",
        type="bool",
        default=True,
    )


def _settings(config: pytest.Config) -> _Settings:
    given = config.getoption("agentfuzz_cassettes")
    if given:
        cassettes = config.invocation_params.dir / given
    else:
        cassettes = config.rootpath / str(config.getini("agentfuzz_cassettes"))
    base_url = config.getoption("agentfuzz_base_url")
    problem = None if base_url is None else base_url_problem(base_url)
    if problem:
        raise pytest.UsageError(f"--agentfuzz-base-url {base_url!r}: {problem}")
    mode = config.getoption("agentfuzz_record_mode")
    if mode in _REWRITE and base_url is None:
        raise pytest.UsageError(f"--agentfuzz-record-mode {mode} needs --agentfuzz-base-url")
    model, seed = config.getoption("agentfuzz_model"), config.getoption("agentfuzz_seed")
    return _Settings(cassettes.resolve(), base_url, model, mode, seed)


@pytest.hookimpl(trylast=True)  # after Hypothesis's own plugin has loaded --hypothesis-profile
def pytest_configure(config: pytest.Config) -> None:
    config.stash[_SETTINGS] = _settings(config)
    if not config.getini("agentfuzz_shared_database"):
        return
    from hypothesis import settings
    from hypothesis.database import DirectoryBasedExampleDatabase

    current = settings.get_current_profile_name()
    # Only Hypothesis's untouched default is ours to replace: an explicit --hypothesis-profile,
    # a profile a conftest loaded, and the "ci" profile Hypothesis picks itself all stay.
    if current != "default" or config.getoption("hypothesis_profile", None):
        return
    folder = config.rootpath / ".agentfuzz" / "examples"
    settings.register_profile(_PROFILE_NAME, database=DirectoryBasedExampleDatabase(str(folder)))
    settings.load_profile(_PROFILE_NAME)
    config.stash[_PREVIOUS_PROFILE] = current


def pytest_unconfigure(config: pytest.Config) -> None:
    previous = config.stash.get(_PREVIOUS_PROFILE, None)
    if previous is not None:
        from hypothesis import settings

        settings.load_profile(previous)


def pytest_report_header(config: pytest.Config) -> str | None:
    found = config.stash.get(_SETTINGS, None)
    if found is None or not (found.base_url or found.cassettes.is_dir()):
        return None
    how = f"live {found.base_url}, record mode {found.record_mode}" if found.base_url else "offline"
    return f"agentfuzz: cassettes {found.cassettes} ({how})"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> CassetteFile | None:
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    found = parent.config.stash.get(_SETTINGS, None)
    if found is None or not file_path.resolve().is_relative_to(found.cassettes):
        return None
    # Light: this module, too, imports only the standard library and pytest at the top.
    from agentfuzz.pytest_campaign import is_campaign_cassette

    if is_campaign_cassette(file_path):
        return None
    item: CassetteFile = CassetteFile.from_parent(parent, path=file_path)
    return item


class CassetteFile(pytest.File):
    """A cassette file: it holds exactly one item, so one worker owns the file."""

    def collect(self) -> Iterable[pytest.Item]:
        yield CassetteItem.from_parent(self, name=self.path.name)


class CassetteItem(pytest.Item):
    """One cassette replayed offline, or re-sent to the live server."""

    def runtest(self) -> None:
        found = self.config.stash[_SETTINGS]
        if found.base_url is None:
            _replay(self.path, found.seed)
        else:
            _resend(self.path, found.base_url, found.model, found.record_mode in _REWRITE)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | Any:
        if isinstance(excinfo.value, CassetteFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"cassette {self.name}"


@contextlib.contextmanager
def _no_network() -> Iterator[None]:
    """Make every IP socket connect fail: a replay that reaches for the network is a bug."""

    def guard(real: Callable[..., Any]) -> Callable[..., Any]:
        def connect(sock: socket.socket, address: Any) -> Any:
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                # Not an OSError, which clients may retry or report as an unreachable server;
                # closed here, because callers close a socket only on an OSError.
                sock.close()
                raise NetworkBlocked(
                    f"offline cassette replay tried to connect to {address!r}; "
                    "pass --agentfuzz-base-url to test a live server"
                )
            return real(sock, address)

        return connect

    with pytest.MonkeyPatch.context() as patch:
        for name in ("connect", "connect_ex"):
            patch.setattr(socket.socket, name, guard(getattr(socket.socket, name)))
        yield


def _replay(path: Path, seed: int) -> None:
    from agentfuzz.replay import replay_cassette
    from agentfuzz.transport.errors import CassetteError, NotInCassette

    with _no_network():
        try:
            replay = replay_cassette(path, seed)
        except (CassetteError, NotInCassette, NetworkBlocked) as exc:
            raise CassetteFailure(str(exc)) from None
    differing = [turn for turn in replay.turns if not turn.same]
    if not differing:
        return
    lines = [
        f"{path.name}: {len(differing)} of {len(replay.turns)} turn(s) no longer give the "
        f"verdicts recorded with them (replay seed {seed})"
    ]
    for turn in differing:
        lines.append(f"  turn {turn.number} POST {urlsplit(turn.url).path}")
        lines.append(f"    recorded: {_verdicts(turn.recorded)}")
        lines.append(f"    now:      {_verdicts([_as_dict(v) for v in turn.violations])}")
    raise CassetteFailure("\n".join(lines))


def _as_dict(v: Violation) -> dict[str, str]:
    return {"oracle": v.oracle, "message": v.message}


def _verdicts(verdicts: list[dict[str, str]]) -> str:
    shown = [f"{v.get('oracle', '?')}: {_line(v.get('message', ''))}" for v in verdicts]
    return "; ".join(shown) or "ok"


def _line(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _recorded_requests(path: Path) -> tuple[dict[str, Any], list[tuple[int, str, Case, Any]]]:
    """A cassette's metadata, and per interaction: its number, URI path, case and JSON body."""
    # replay.py's own reader, so both modes reject the same cassettes.
    from agentfuzz.cassette_codec import read_turns
    from agentfuzz.transport.errors import CassetteError

    try:
        about, turns = read_turns(path)
        return about, [(t.number, urlsplit(t.uri).path, t.case, t.body) for t in turns]
    except CassetteError as exc:
        raise CassetteFailure(str(exc)) from None


def _resend(path: Path, base_url: str, model: str | None, rewrite: bool) -> None:
    """Send every recorded request to ``base_url``; fail listing each oracle that fires."""
    from agentfuzz.cassette_codec import Recorded
    from agentfuzz.judge import check
    from agentfuzz.target import Target
    from agentfuzz.transport.errors import TargetUnreachable

    about, sends = _recorded_requests(path)
    # The Target's own model is unused here: each request goes as recorded.
    used = model or str(sends[0][3].get("model"))
    failing: list[str] = []
    recorded: list[Recorded] = []
    cut: list[int] = []
    target = Target(base_url, used, os.environ.get("OPENAI_API_KEY"), _TIMEOUT)
    try:
        for number, uri_path, case, body in sends:
            if model is not None:
                body["model"] = model
            # The base URL ends in /v1 (the openai SDK convention), as the recorded one did.
            route = "/" + uri_path.split("/v1/", 1)[1] if "/v1/" in uri_path else uri_path
            try:
                obs = target.resend(route, body, case.stream)
            except TargetUnreachable as exc:
                raise CassetteFailure(f"{path.name}: turn {number}: {exc}") from None
            found = check(case, obs)
            failing += [
                f"  turn {number} POST {route}: {v.oracle}: {_line(v.message)}" for v in found
            ]
            if obs.exchange.status is None or obs.exchange.failure:
                cut.append(number)
            else:
                recorded.append(Recorded(obs, case, tuple(found)))
    finally:
        target.close()
    note = ""
    if rewrite and cut:
        note = f"not rewritten: the answer to turn {cut[0]} was cut short"
    elif rewrite:
        kept = {k: v for k, v in about.items() if k not in ("turns", "version")}
        _rewrite(path, recorded, kept | {"target": base_url, "model": used})
    if failing:
        head = f"{path.name}: {len(failing)} oracle(s) fire against {base_url}"
        raise CassetteFailure("\n".join([head, *failing, *([f"  ({note})"] if note else [])]))
    if note:
        raise CassetteFailure(f"{path.name}: {note}")


def _rewrite(path: Path, recorded: list[Any], about: dict[str, Any]) -> None:
    """Replace the cassette (at once: ``save_cassette`` never leaves half a file)."""
    from agentfuzz.cassette_codec import write_cassette

    write_cassette(path, recorded, about)


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
    from agentfuzz.target import Target, first_model
    from agentfuzz.transport.errors import ModelListError, TargetUnreachable

    key = os.environ.get("OPENAI_API_KEY")
    model: str | None = pytestconfig.getoption("agentfuzz_model")
    if model is None:
        try:
            model = first_model(agentfuzz_base_url, key, _TIMEOUT)
        except (ModelListError, TargetUnreachable) as exc:
            pytest.fail(f"{exc}; pass --agentfuzz-model", pytrace=False)
    target = Target(agentfuzz_base_url, model, key, _TIMEOUT)
    yield target
    target.close()


@pytest.fixture
def agentfuzz_campaign(request: pytest.FixtureRequest, tmp_path: Path) -> CampaignRunner:
    """``(*, seed, profile="default", modes=(("chat", False),), kinds=("synthetic",),
    max_examples=20, trials=1, cassettes=None)`` -> the ``agentfuzz.Report`` of a seeded campaign.

    Offline it replays the campaign from the item's cassettes (``cassettes``, default
    ``<test folder>/cassettes/<module stem>/<test name>/``); live it fuzzes the server,
    recording under ``--agentfuzz-record-mode`` (``none``: no cassettes). Bundles go under
    ``tmp_path``. See ``agentfuzz.pytest_campaign``.
    """
    from agentfuzz.pytest_campaign import CampaignRunner

    found = request.config.stash[_SETTINGS]
    item = request.node
    assert isinstance(item, pytest.Item)
    return CampaignRunner(
        item, tmp_path / "agentfuzz", found.base_url, found.model, found.record_mode
    )


@pytest.fixture(scope="session")
def agentfuzz_cases() -> Callable[..., SearchStrategy[Case]]:
    """``(profile="default", api="chat", stream=False)`` -> a Hypothesis strategy of ``Case``."""
    from agentfuzz.profiles import load_profile
    from agentfuzz.strategies import cases

    def strategy(
        profile: str = "default", api: str = "chat", stream: bool = False
    ) -> SearchStrategy[Case]:
        return cases(load_profile(profile), api, stream)  # type: ignore[arg-type]

    return strategy


@pytest.fixture(scope="session")
def agentfuzz_check() -> Callable[..., None]:
    """``(case, observation, only=None, skip=())``: run the oracles, fail listing violations."""
    from agentfuzz import judge

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
