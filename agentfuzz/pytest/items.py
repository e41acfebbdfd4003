"""The plugin's test items: a recorded cassette (replayed offline, or re-sent to a live server),
and a repro bundle folder (its recorded failure replayed offline, or its minimal request re-sent).

Like the plugin, this module imports only the standard library and pytest at the top.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

if TYPE_CHECKING:
    from agentfuzz.model.history import Case
    from agentfuzz.model.observation import Violation

__all__ = [
    "REWRITE",
    "SETTINGS",
    "TIMEOUT",
    "BundleFile",
    "BundleItem",
    "CassetteFailure",
    "CassetteFile",
    "CassetteItem",
    "NetworkBlocked",
    "Settings",
    "is_bundle",
]

REWRITE = frozenset({"new_episodes", "all"})
TIMEOUT = 60.0


@dataclass(frozen=True)
class Settings:
    cassettes: Path
    base_url: str | None
    model: str | None
    record_mode: str
    seed: int


SETTINGS = pytest.StashKey[Settings]()


class CassetteFailure(Exception):
    """A cassette item's failure, shown as its message alone: no traceback says more."""


class NetworkBlocked(RuntimeError):
    """An offline cassette item tried to open a network connection."""


class CassetteFile(pytest.File):
    """A cassette file: it holds exactly one item, so one worker owns the file."""

    def collect(self) -> Iterable[pytest.Item]:
        yield CassetteItem.from_parent(self, name=self.path.name)


class _Item(pytest.Item):
    """An item whose ``CassetteFailure`` is shown as its message alone."""

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | Any:
        if isinstance(excinfo.value, CassetteFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)


class CassetteItem(_Item):
    """One cassette replayed offline, or re-sent to the live server."""

    def runtest(self) -> None:
        found = self.config.stash[SETTINGS]
        if found.base_url is None:
            _replay(self.path, found.seed)
        else:
            _resend(self.path, found.base_url, found.model, found.record_mode in REWRITE)

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
    from agentfuzz.errors import CassetteError, NotInCassette
    from agentfuzz.tape.replay import replay_cassette

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
    from agentfuzz.errors import CassetteError
    from agentfuzz.tape.codec import read_turns

    try:
        about, turns = read_turns(path)
        return about, [(t.number, urlsplit(t.uri).path, t.case, t.body) for t in turns]
    except CassetteError as exc:
        raise CassetteFailure(str(exc)) from None


def _resend(path: Path, base_url: str, model: str | None, rewrite: bool) -> None:
    """Send every recorded request to ``base_url``; fail listing each oracle that fires."""
    from agentfuzz.errors import TargetUnreachable
    from agentfuzz.judge.judge import check
    from agentfuzz.tape.codec import Recorded
    from agentfuzz.wire.target import Target

    about, sends = _recorded_requests(path)
    # The Target's own model is unused here: each request goes as recorded.
    used = model or str(sends[0][3].get("model"))
    failing: list[str] = []
    recorded: list[Recorded] = []
    cut: list[int] = []
    target = Target(base_url, used, os.environ.get("OPENAI_API_KEY"), TIMEOUT)
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
    from agentfuzz.tape.codec import write_cassette

    write_cassette(path, recorded, about)


def is_bundle(folder: Path) -> bool:
    """Whether ``folder`` is a repro bundle: its ``repro.json`` beside its ``cassette.yaml``."""
    return (folder / "repro.json").is_file() and (folder / "cassette.yaml").is_file()


class BundleFile(pytest.File):
    """A bundle folder's ``repro.json``: it holds exactly one item, the bundle's test."""

    def collect(self) -> Iterable[pytest.Item]:
        yield BundleItem.from_parent(self, name=f"bundle {self.path.parent.name}")


class BundleItem(_Item):
    """One repro bundle. Offline it replays the recorded failing exchange and passes while the
    recorded fault still shows (the bundle documents it); live (``--agentfuzz-base-url`` or
    ``$AGENTFUZZ_BASE_URL``) it re-sends the minimal request and passes once the oracle no
    longer fires, so it fails while the server has the bug. The same test as the bundle's own
    ``test_repro.py``, without a copy of that file in every folder."""

    def runtest(self) -> None:
        from agentfuzz.errors import CassetteError, NotInCassette, TargetUnreachable
        from agentfuzz.tape.replay import replay_bundle, resend_bundle

        found = self.config.stash[SETTINGS]
        folder = self.path.parent
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
            oracle, signature = str(doc["oracle"]), str(doc["signature"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CassetteFailure(f"{self.path}: not a repro.json: {exc}") from None
        base_url = found.base_url or os.environ.get("AGENTFUZZ_BASE_URL") or None
        try:
            if base_url is None:
                with _no_network():
                    fired = {v.signature for v in replay_bundle(folder, found.seed)}
                if signature not in fired:
                    shown = ", ".join(sorted(fired)) or "nothing"
                    raise CassetteFailure(
                        f"{folder.name}: the recorded exchange no longer shows {signature} "
                        f"(it shows {shown})"
                    )
                return
            still = [v for v in resend_bundle(folder, base_url, found.model) if v.oracle == oracle]
        except (CassetteError, NotInCassette, NetworkBlocked, TargetUnreachable) as exc:
            raise CassetteFailure(f"{folder.name}: {exc}") from None
        if still:
            raise CassetteFailure(f"{folder.name}: {oracle} still fires: {still[0].message}")

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name
