"""Fuzz profiles: which histories the strategies may build, loaded from ``strategies/*.toml``.

A profile is data, not code, so a server maintainer can narrow a run (say, Kimi ids only,
two turns) without touching Python. ``strategies/default.toml`` documents every field.

Mutations (``malformed_arguments``, ``dropped_calls``, ...) are booleans, not
probabilities: when one is on, Hypothesis draws per call or per turn whether to apply it,
and that draw's False is "no mutation", so the shrinker removes mutations a failure does not
need. A probability would fight the shrinker instead.
"""

from __future__ import annotations

import tomllib
from collections.abc import Collection
from pathlib import Path
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from agentfuzz.errors import ProfileError
from agentfuzz.model.plan import POLICIES, Policy
from agentfuzz.request.ids import ADVERSARIAL, FAMILIES, SHAPES
from agentfuzz.request.relations import RELATIONS
from agentfuzz.request.surface import DEFAULT_DIMENSIONS, DIMENSIONS, KNOBS

__all__ = [
    "KnobDefaults",
    "Profile",
    "ProfileError",
    "ToolChoiceKind",
    "list_profiles",
    "load_profile",
]

ToolChoiceKind = Literal["auto", "none", "required", "named"]

_PROJECT_DIR = Path(__file__).resolve().parents[2] / "strategies"
_WHEEL_DIR = Path(__file__).resolve().parents[1] / "_profiles"
# A family is repeated by its weight in the list drawn from: a bound keeps that list small.
_MOST_WEIGHT = 1000
# A token budget past any model's context is a typo, not a test.
_MOST_TOKENS = 100_000_000


class KnobDefaults(BaseModel):
    """Sampling knobs sent whenever a request leaves them out (None: really left out)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int | None = None
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=None, gt=0, le=_MOST_TOKENS)


class Profile(BaseModel):
    """What the history strategies may generate; every field has the default profile's value."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "default"
    description: str = ""
    # Upper bounds keep a typo (``1e12``) from becoming a MemoryError halfway through a run:
    # each is far past what a request or a readable repro needs.
    max_turns: int = Field(default=6, gt=0, le=1000)
    max_parallel_calls: int = Field(default=3, ge=0, le=256)
    max_tools: int = Field(default=4, gt=0, le=1024)
    max_text_size: int = Field(default=40, ge=0, le=1_000_000)
    id_families: tuple[str, ...] = FAMILIES
    id_weights: dict[str, int] = Field(default_factory=dict)
    adversarial_ids: bool | tuple[str, ...] = True
    mix_families: bool = True
    namespaced_tools: bool = True
    namespace_tools: bool = True
    adversarial_names: bool = True
    colliding_names: bool = True
    adversarial_schemas: bool = True
    reasoning: bool = True
    system_messages: bool = True
    markup_texts: bool = True
    malformed_arguments: bool = True
    schema_violating_arguments: bool = True
    dropped_calls: bool = True
    orphan_results: bool = True
    duplicate_ids: bool = True
    tool_choices: tuple[ToolChoiceKind, ...] = ("auto", "none", "required", "named")
    omit_tools_last: bool = True
    temperatures: tuple[float, ...] = (0.0, 0.7, 1.0)
    seeds: tuple[int, ...] = (0, 1234)
    max_tokens: tuple[int, ...] = (16, 256, 4096)
    session_turns: int = Field(default=8, gt=0, le=1000)
    session_policies: tuple[Policy, ...] = POLICIES
    switch_modes: bool = True
    # tool_choice values a session turn may carry (ToolChoiceKind; "named" names the tool the
    # turn's user message asks for). Empty: session turns leave tool_choice out.
    session_choices: tuple[ToolChoiceKind, ...] = ()
    server_honours_seed: bool = False
    knob_defaults: KnobDefaults = KnobDefaults()
    # The request surface's dimensions a request may use (agentfuzz/request/surface.py), by swarm.
    surface: tuple[str, ...] = DEFAULT_DIMENSIONS
    # How many characters of text reach the target's context limit (the long_text dimension
    # pads the last user message to about this, half of it, or twice it).
    # 16M characters: about 4M tokens, past any model's context today.
    context_chars: int = Field(default=32768, gt=0, le=16_000_000)
    # Signature prefixes this target's model produces on its own (e.g. "bad_arguments:schema"
    # where nothing constrains the arguments): judged and recorded, never reported as findings.
    model_signatures: tuple[str, ...] = ()
    # The markup this target can leak: its tokenizer's special tokens and its tool parser's
    # tags. Given, a leaked_markup finding signed by any other spelling (another family's
    # tokens are plain text to this tokenizer, so the model wrote them) is judged and recorded,
    # never reported. Empty: every family counts (a target you do not know).
    markup: tuple[str, ...] = ()
    # The knobs this target claims to honour (agentfuzz.request.surface.KNOBS): the knob oracle's
    # findings on the others are judged and recorded, never reported as findings.
    knobs: tuple[str, ...] = KNOBS
    # The relations (request/relations.py) a request may be paired by: the judge then sends
    # the related request right after it. Empty: no pairs (``--differential`` still adds the
    # stream twin to every request). ``chain`` is for targets that store Responses answers,
    # and is paired only where a profile names it.
    relations: tuple[str, ...] = tuple(n for n in RELATIONS if n != "chain")

    @property
    def quiet_signatures(self) -> tuple[str, ...]:
        """Signature prefixes judged but never reported: the model's own, and the knobs this
        target does not claim."""
        unclaimed = tuple(f"knob:{k}" for k in KNOBS if k not in self.knobs)
        return self.model_signatures + unclaimed

    @field_validator("knobs")
    @classmethod
    def _known_knobs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        _check_names(value, KNOBS, "knob")
        return value

    @field_validator("relations")
    @classmethod
    def _known_relations(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        _check_names(value, RELATIONS, "relation")
        _check_once(value, "relation")
        return value

    @field_validator("session_policies")
    @classmethod
    def _some_policy(cls, value: tuple[Policy, ...]) -> tuple[Policy, ...]:
        if not value:
            raise ValueError("needs at least one policy")
        _check_once(value, "policy")
        return value

    @field_validator("surface")
    @classmethod
    def _known_dimensions(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        _check_names(value, DIMENSIONS, "dimension")
        _check_once(value, "dimension")
        return value

    @field_validator("id_families")
    @classmethod
    def _known_families(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("needs at least one family")
        _check_names(value, FAMILIES, "id family")
        if len(set(value)) != len(value):
            raise ValueError("lists a family twice (use id_weights to weight one)")
        return value

    @field_validator("adversarial_ids")
    @classmethod
    def _known_adversarial(cls, value: bool | tuple[str, ...]) -> bool | tuple[str, ...]:
        if not isinstance(value, bool):
            _check_names(value, ADVERSARIAL, "id family")
        return value

    @field_validator("temperatures")
    @classmethod
    def _temperature_range(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        if any(not 0.0 <= t <= 2.0 for t in value):
            raise ValueError("temperatures must lie in [0, 2]")
        return value

    @field_validator("max_tokens")
    @classmethod
    def _positive_tokens(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if any(not 0 < n <= _MOST_TOKENS for n in value):
            raise ValueError(f"max_tokens must lie in [1, {_MOST_TOKENS}]")
        return value

    @field_validator("id_weights")
    @classmethod
    def _weights_name_used_families(
        cls, value: dict[str, int], info: ValidationInfo
    ) -> dict[str, int]:
        families = info.data.get("id_families", FAMILIES)
        for family, weight in value.items():
            if family not in families:
                raise ValueError(f"{family!r} is not in id_families")
            if not 1 <= weight <= _MOST_WEIGHT:
                raise ValueError(f"{family!r} needs a weight from 1 to {_MOST_WEIGHT}")
        return value

    @property
    def adversarial(self) -> tuple[str, ...]:
        """The adversarial id families this profile turns on (``True`` means all of them)."""
        if isinstance(self.adversarial_ids, bool):
            return ADVERSARIAL if self.adversarial_ids else ()
        return self.adversarial_ids

    @property
    def weighted_families(self) -> tuple[str, ...]:
        """``id_families`` with each family repeated by its weight, order kept (first shrinks)."""
        return tuple(f for f in self.id_families for _ in range(self.id_weights.get(f, 1)))

    @property
    def family_strata(self) -> tuple[tuple[str, ...], ...]:
        """``weighted_families`` split by id shape (``ids.SHAPES``): a turn draws a shape, then
        a family of it. Ordered by the profile's first family, so the first shrinks."""
        weighted = self.weighted_families
        strata = [tuple(f for f in weighted if f in shape) for shape in SHAPES]
        kept = [s for s in strata if s]
        return tuple(sorted(kept, key=lambda s: weighted.index(s[0])))


def _check_names(value: tuple[str, ...], known: Collection[str], what: str) -> None:
    unknown = [v for v in value if v not in known]
    if unknown:
        raise ValueError(f"unknown {what} {unknown[0]!r} (known: {', '.join(known)})")


def _check_once(value: tuple[str, ...], what: str) -> None:
    if len(set(value)) != len(value):
        raise ValueError(f"lists a {what} twice")


def _profile_dirs() -> list[Path]:
    return [d for d in (_PROJECT_DIR, _WHEEL_DIR) if d.is_dir()]


def list_profiles() -> list[str]:
    """Names of the profiles ``load_profile`` finds by bare name, sorted."""
    return sorted({p.stem for d in _profile_dirs() for p in d.glob("*.toml")})


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _locate(name_or_path: str) -> Path:
    if "/" in name_or_path or name_or_path.endswith(".toml"):
        return Path(name_or_path)
    for directory in _profile_dirs():
        candidate = directory / f"{name_or_path}.toml"
        if candidate.is_file():
            return candidate
    known = ", ".join(list_profiles()) or "none"
    raise ProfileError(f"strategies/{name_or_path}.toml: no such profile (known: {known})")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def load_profile(name_or_path: str) -> Profile:
    """The profile named ``name_or_path`` (``strategies/<name>.toml``) or stored at that path.

    Anything containing ``/`` or ending ``.toml`` is a path. A file without ``name`` takes its
    stem. Raises ``ProfileError`` with a one-line message for every way loading can fail.
    """
    path = _locate(name_or_path)
    shown = _shown(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProfileError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ProfileError(f"{shown}: not UTF-8 text: {exc.reason}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{shown}: invalid TOML: {_one_line(str(exc))}") from None
    data.setdefault("name", path.stem)
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "profile"
        message = error["msg"].removeprefix("Value error, ")
        raise ProfileError(f"{shown}: {field}: {_one_line(message)}") from None
