"""``agentfuzz fuzz``'s checks before anything starts: every option, alone and with the others, in
the order a person meets them. The first that fails exits 2 with one line. What passes becomes
the campaign's configuration fields, and, for a campaign that only plays its tapes back, what
they say of its target (``runs.campaign.replayed``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from agentfuzz.cli._common import (
    checked_headers,
    checked_key,
    checked_url,
    command_line,
    config_used,
    fail,
    oracle_names,
    trials_of,
    writable_out,
)
from agentfuzz.cli._fuzz_options import FuzzOptions
from agentfuzz.cli._suggest import closest
from agentfuzz.errors import EXIT_USAGE, InputError
from agentfuzz.judge.judge import oracle_names as known_oracles
from agentfuzz.model.history import Case
from agentfuzz.model.modes import ALL_MODES, Kind
from agentfuzz.output.reports import unwritable
from agentfuzz.request.profiles import Profile, list_profiles, load_profile
from agentfuzz.runs.campaign import RecordedTarget, recorded_workers, replayed, seed_sessions

__all__ = ["preflight"]

_KINDS: dict[str, tuple[Kind, ...]] = {
    "synthetic": ("synthetic",),
    "session": ("session",),
    "both": ("synthetic", "session"),
}

# Options that go into the configuration as they are.
_PASSED_ON = (
    "out",
    "max_examples",
    "seed",
    "timeout",
    "record",
    "cassette",
    "max_time",
    "max_failures",
    "differential",
)


def preflight(o: FuzzOptions) -> tuple[dict[str, Any], RecordedTarget | None]:
    """The ``FuzzConfig`` fields the options give, all but the target's, and what the tapes say
    of the target when the campaign only replays them; exit 2 for the first option that cannot
    work."""
    checked_url(o.base_url)
    many = 2 if o.workers == "auto" else o.workers
    _middleman_mode(o.backend, o.backend_port, o.base_url, o.serve, many)
    if o.backend is not None and o.cassette is not None:
        fail(EXIT_USAGE, "middleman mode (--backend) cannot run through --cassette yet")
    if o.base_url is not None and o.serve is not None:
        fail(EXIT_USAGE, "--serve starts the reference server only when --base-url is absent")
    if o.record_mode is not None and o.cassette is None:
        fail(EXIT_USAGE, "--record-mode needs --cassette DIR")
    if o.model is not None and not o.model.strip():
        fail(EXIT_USAGE, "--model: empty model name")
    fields = _fields(o)
    writable_out(o.out)
    if (problem := unwritable(o.reports, o.junit_xml)) is not None:
        fail(EXIT_USAGE, problem)
    _writable_reports(o.reports, o.junit_xml)
    if o.record is not None:
        writable_out(o.record, "--record")
    if o.cassette is None:
        return fields, None
    return fields, _tapes(o.cassette, o.workers, fields["record_mode"])


def _fields(o: FuzzOptions) -> dict[str, Any]:
    """What the options say of the campaign, as ``FuzzConfig`` fields."""
    modes = tuple(m for m in ALL_MODES if o.api in (None, m[0]) and o.stream in (None, m[1]))
    selected, skipped = _chosen_oracles(o.only, o.skip)
    fields: dict[str, Any] = {
        "profile": _profile(o.profile),
        "api_key": checked_key(o.api_key),
        "headers": checked_headers(o.headers),
        "trials": trials_of(o.trials),
        "modes": modes,
        "kinds": _KINDS[o.mode],
        "only": selected,
        "skip": skipped,
        "record_mode": o.record_mode or "once",
        "command": command_line(),
        "config_file": config_used(),
    }
    fields |= {k: getattr(o, k) for k in _PASSED_ON}
    if o.puppet is not None:
        fields["puppet"] = _puppet(o.puppet, o.seed_sessions)
    if o.seed_sessions is not None:
        fields["seeds"] = _seeds(o.seed_sessions, fields["kinds"])
    return fields


def _puppet(name: str, seed_sessions: Path | None) -> str:
    """``--puppet FORMAT`` (a format of the catalog, checked as the option is read), for
    generated requests and sessions: captured ones hold no script to write."""
    if seed_sessions is not None:
        fail(EXIT_USAGE, "--puppet scripts generated requests and sessions: not --seed-sessions")
    return name


def _profile(name: str) -> Profile:
    """``--profile NAME|PATH`` loaded; for a name that is none, exit 2 with the one meant."""
    from agentfuzz.reference import BEHAVIOURS

    known = list_profiles()
    if "/" in name or name.endswith(".toml") or name in known:
        return load_profile(name)
    if name in BEHAVIOURS:
        hint = f"; {name} is a reference server profile: --serve {name} starts it"
    else:
        near = closest(name, known)
        hint = f"; did you mean {near}?" if near else ""
    fail(EXIT_USAGE, f"--profile {name}: no such fuzz profile{hint} (known: {', '.join(known)})")


def _writable_reports(reports: tuple[tuple[str, Path], ...], junit: Path | None) -> None:
    """Exit 2 for a report that could not be written, as ``--out`` is checked: found after the
    run, the failure would hide what the run found. An html report's folder, and a file
    report's folder, are made now and written in once."""
    asked = [(f"--report {kind}", path, kind == "html") for kind, path in reports]
    asked += [("--junit-xml", junit, False)] if junit is not None else []
    for flag, path, folder in asked:
        if folder:
            writable_out(path, flag)
            continue
        writable_out(path.parent, f"{flag} {path}: folder")
        if path.exists() and not os.access(path, os.W_OK):
            fail(EXIT_USAGE, f"{flag} {path}: not writable")


def _middleman_mode(
    backend: str | None, port: int | None, base_url: str | None, serve: str | None, workers: int
) -> None:
    """Exit 2 for a proxy-mode flag combination that cannot work."""
    if backend is None:
        if port is not None:
            fail(EXIT_USAGE, "--backend-port needs --backend PROFILE")
        return
    if serve is not None:
        fail(EXIT_USAGE, "--backend runs behind a proxy given by --base-url, not with --serve")
    if base_url is None:
        fail(EXIT_USAGE, "--backend needs --base-url: the proxy in front of the backend")
    if workers > 1:
        # Which backend request belongs to which client request is only exact one at a time.
        fail(EXIT_USAGE, "middleman mode (--backend) runs with --workers 1")


def _chosen_oracles(only: str | None, skip: str | None) -> tuple[list[str] | None, list[str]]:
    """``--oracles`` and ``--skip-oracles`` as names; exit 2 unless some oracle is left."""
    selected, skipped = oracle_names(only), oracle_names(skip) or []
    if selected == []:
        fail(EXIT_USAGE, f"--oracles {only!r}: names no oracle")
    if not set(known_oracles() if selected is None else selected) - set(skipped):
        fail(EXIT_USAGE, "--oracles/--skip-oracles leave no oracle to run")
    return selected, skipped


def _seeds(folder: Path, kinds: tuple[Kind, ...]) -> tuple[Case, ...]:
    """``--seed-sessions DIR``'s requests; exit 2 with one line when there are none to use."""
    if not folder.is_dir():
        fail(EXIT_USAGE, f"--seed-sessions {folder}: not a folder")
    if "synthetic" not in kinds:
        fail(EXIT_USAGE, "--seed-sessions seeds synthetic mode: use --mode synthetic or both")
    try:
        found = seed_sessions(folder)
    except InputError as exc:
        fail(EXIT_USAGE, f"--seed-sessions: {exc}")
    if not found:
        fail(EXIT_USAGE, f"--seed-sessions {folder}: holds no captured request")
    return found


def _tapes(folder: Path, workers: int | Literal["auto"], mode: str) -> RecordedTarget | None:
    """``--cassette DIR``: what its tapes say of the target when the campaign only replays
    them; exit 2 for a replay with nothing to play, or with other workers than recorded it (each
    shard plays its own tapes, ``shard-K``), and for a folder a recording cannot write in."""
    if workers == "auto":
        fail(EXIT_USAGE, "--workers auto measures a live server: with --cassette, give a number")
    recorded = recorded_workers(folder) if mode in ("none", "once") else 0
    if recorded and recorded != workers:
        fail(
            EXIT_USAGE,
            f"--cassette {folder}: recorded with --workers {recorded}, "
            f"so play it with --workers {recorded} (or --record-mode all)",
        )
    replay = replayed(folder, mode)
    if mode == "none" and replay is None:
        fail(EXIT_USAGE, f"--cassette {folder}: no cassette to replay (--record-mode none)")
    if replay is None:
        writable_out(folder, "--cassette")
    return replay
