"""What one ``agentfuzz fuzz`` run does, as typed data: serialised for ``--workers`` shards by
pydantic (the API key and the proxy's live backend log never are), read back the same way."""

from __future__ import annotations

import functools
import secrets
import subprocess
import time
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

import hypothesis.core
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentfuzz.model.history import Case
from agentfuzz.model.modes import ALL_MODES, Kind, Mode
from agentfuzz.request.profiles import Profile

__all__ = [
    "FuzzConfig",
    "ShardSpec",
    "drawn_seed",
    "found_by",
    "new_run_id",
    "version",
]


class FuzzConfig(BaseModel):
    """What one ``agentfuzz fuzz`` run does."""

    model_config = ConfigDict(frozen=True)

    base_url: str
    model: str
    profile: Profile
    out: Path
    modes: tuple[Mode, ...] = ALL_MODES
    kinds: tuple[Kind, ...] = ("synthetic",)
    # Never serialised: a shard reads it from its environment.
    api_key: str | None = Field(default=None, exclude=True, repr=False)
    # Request headers (``--header``): secrets like the key, so never serialised either; a shard
    # reads them from its environment (``AGENTFUZZ_HEADERS``).
    headers: dict[str, str] = Field(default_factory=dict, exclude=True, repr=False)
    max_examples: int = 100
    # Never None once built: a run given no seed draws one (``drawn_seed``), so every run, and
    # every bundle it writes, says which seed repeats it.
    seed: int | None = None
    # True when ``seed`` was drawn, not given: such a run keeps the example database (saved
    # failures replay first), which a ``--seed`` run turns off to repeat its draws exactly.
    seed_drawn: bool = False
    # Tries per judgement: a number, or "auto" to measure each failure's rate and derive it.
    trials: int | Literal["auto"] = 1
    only: tuple[str, ...] | None = None
    skip: tuple[str, ...] = ()
    timeout: float = 60.0
    database: Path | None = Path(".agentfuzz/examples")
    # Write every example (one request) or session (its requests) as a cassette here.
    record: Path | None = None
    # Run the campaign through cassettes in this folder, under a vcrpy record mode.
    cassette: Path | None = None
    record_mode: str = "once"
    # Seconds the run may take: past them it stops at its next example or shrink step.
    max_time: float | None = None
    # Distinct failures (oracle, signature) after which fuzzing stops, and shrinking begins.
    max_failures: int | None = None
    # Middleman mode: the ``target.BackendLog`` of the backend behind the proxy at base_url
    # (proxy_fidelity reads it); a live object, so never serialised.
    backend: Any = Field(default=None, exclude=True)
    # Send every request a second time with ``stream`` flipped, for stream_divergence (2x cost).
    differential: bool = False
    # The command that started the run, secrets taken out: what each bundle's found_by names.
    command: str | None = None
    # What a config file gave the command (its path and options, secrets left out), or None.
    config_file: dict[str, Any] | None = None
    # The reference profile when the target is the embedded server this run started (``--serve``,
    # or no ``--base-url``): its port is random, so the example database keys it by this instead.
    serve: str | None = None
    # Captured real requests (``--seed-sessions``) synthetic mode starts from and mutates.
    seeds: tuple[Case, ...] = ()
    # ``--puppet FORMAT``: each request scripts what the model writes, in this tool-call format.
    puppet: str | None = None
    # Whether each mode first sends its openings (``strategies.openings``): of a ``--workers``
    # run's shards only the first does, since the others' would be the same requests again.
    openings: bool = True
    # This run's id, shared by its --workers shards: a bundle folder of another run's is never
    # overwritten (``repro.bundle_dir``).
    run: str = Field(default_factory=lambda: new_run_id())

    @model_validator(mode="before")
    @classmethod
    def _seeded(cls, data: Any) -> Any:
        """A seed for a run given none: drawn here, as the configuration is built, so the
        summary, every bundle and the console all name the one seed that repeats the run. A
        campaign through cassettes keeps 0: its tapes were recorded under a fixed seed."""
        if isinstance(data, dict) and data.get("seed") is None:
            if data.get("cassette") is not None:
                return {**data, "seed": 0}
            return {**data, "seed": drawn_seed(), "seed_drawn": True}
        return data


class ShardSpec(BaseModel):
    """A ``--workers N`` campaign as its shards read it: the configuration (paths absolute) and
    which shards each pytest item runs."""

    config: FuzzConfig
    workers: int
    groups: list[list[int]]


@functools.lru_cache(maxsize=1)
def version() -> str:
    """The installed agentfuzz's version, as its package metadata says, and when it runs from
    a git checkout (an editable install) the commit too: ``0.1.0+g1a2b3c4`` (``.dirty`` when the
    tree has changes), so a campaign can be re-run with the very code that ran it."""
    try:
        release = metadata.version("agentfuzz")
    except metadata.PackageNotFoundError:
        release = "unknown"
    here = Path(__file__).resolve().parents[2]
    if not (here / ".git").exists():
        return release
    try:
        described = subprocess.run(
            ["git", "-C", str(here), "describe", "--always", "--dirty=.dirty", "--exclude=*"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return release
    return f"{release}+g{described}" if described else release


def drawn_seed() -> int:
    """A fresh seed for a run given none: small enough to read and type back as ``--seed``.
    Where Hypothesis's seed is pinned for the whole process (``pytest --hypothesis-seed``),
    that one: the pin is the caller saying which draws it wants."""
    pinned = hypothesis.core.global_force_seed
    return int(pinned) if isinstance(pinned, int) else secrets.randbelow(1_000_000)


def new_run_id() -> str:
    """A run's id: when it started (UTC) and a random tail, ``20261202T101500Z-3fa2c1``."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return f"{stamp}-{secrets.token_hex(3)}"


def found_by(config: FuzzConfig) -> dict[str, Any]:
    """What a bundle records of the run that found it, so anyone can run it again: the command,
    the seed this run (or ``--workers`` shard) drew from, the fuzz profile and the version."""
    return {
        "command": config.command,
        "seed": config.seed,
        "profile": config.profile.name,
        "agentfuzz": version(),
        "run": config.run,
    } | ({"config": config.config_file} if config.config_file else {})
