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

Every repro bundle folder (a ``repro.json`` beside its ``cassette.yaml``) under the paths pytest
collects is one test item too (``agentfuzz.pytest.items.BundleItem``): offline it passes while the
recorded fault still shows, live it passes once the server no longer has it. Its ``test_repro.py``
(the same test, for a bundle sent on its own) is then left out, unless named on the command line.

Fixtures (``agentfuzz.pytest.fixtures``): ``agentfuzz_base_url``, ``agentfuzz_target``,
``agentfuzz_cases``, ``agentfuzz_check``, and ``agentfuzz_campaign`` (a seeded fuzz campaign on
the test's own cassettes, see ``agentfuzz.pytest.campaign``; those cassettes are never items).
Unless the user chose a Hypothesis profile (or Hypothesis chose its "ci" profile, which keeps no
database), Hypothesis tests share one example database in
``<rootdir>/.agentfuzz/examples`` (ini ``agentfuzz_shared_database = false`` turns that off).

This module is loaded by every pytest run wherever agentfuzz is installed, so it imports only the
standard library and pytest at the top; agentfuzz itself is imported where it is used.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentfuzz.model.accepted import RECORD_MODES, base_url_problem
from agentfuzz.pytest.fixtures import (
    agentfuzz_base_url,
    agentfuzz_campaign,
    agentfuzz_cases,
    agentfuzz_check,
    agentfuzz_target,
)
from agentfuzz.pytest.items import (
    REWRITE,
    SETTINGS,
    BundleFile,
    CassetteFailure,
    CassetteFile,
    CassetteItem,
    NetworkBlocked,
    Settings,
    is_bundle,
)

__all__ = [
    "RECORD_MODES",
    "BundleFile",
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

_PROFILE_NAME = "agentfuzz"
# The Hypothesis profile that was current before the plugin loaded its own, to restore after.
_PREVIOUS_PROFILE = pytest.StashKey[str]()


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


def _settings(config: pytest.Config) -> Settings:
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
    if mode in REWRITE and base_url is None:
        raise pytest.UsageError(f"--agentfuzz-record-mode {mode} needs --agentfuzz-base-url")
    model, seed = config.getoption("agentfuzz_model"), config.getoption("agentfuzz_seed")
    return Settings(cassettes.resolve(), base_url, model, mode, seed)


@pytest.hookimpl(trylast=True)  # after Hypothesis's own plugin has loaded --hypothesis-profile
def pytest_configure(config: pytest.Config) -> None:
    config.stash[SETTINGS] = _settings(config)
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
    found = config.stash.get(SETTINGS, None)
    if found is None or not (found.base_url or found.cassettes.is_dir()):
        return None
    how = f"live {found.base_url}, record mode {found.record_mode}" if found.base_url else "offline"
    return f"agentfuzz: cassettes {found.cassettes} ({how})"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A bundle's ``test_repro.py`` is left to ``pytest <bundle>/test_repro.py`` named alone: a
    folder of bundles collects each bundle once, as its ``repro.json`` item (many same-named
    ``test_repro.py`` files would not even import side by side)."""
    if collection_path.name == "test_repro.py" and is_bundle(collection_path.parent):
        return True
    return None


def pytest_collect_file(
    file_path: Path, parent: pytest.Collector
) -> CassetteFile | BundleFile | None:
    if file_path.name == "repro.json" and is_bundle(file_path.parent):
        bundle: BundleFile = BundleFile.from_parent(parent, path=file_path)
        return bundle
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    found = parent.config.stash.get(SETTINGS, None)
    if found is None or not file_path.resolve().is_relative_to(found.cassettes):
        return None
    # Light: this module, too, imports only the standard library and pytest at the top.
    from agentfuzz.pytest.campaign import is_campaign_cassette

    if is_campaign_cassette(file_path):
        return None
    item: CassetteFile = CassetteFile.from_parent(parent, path=file_path)
    return item
