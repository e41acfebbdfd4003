"""Seeded fuzz campaigns as pytest tests: the logic behind the ``agentfuzz_campaign`` fixture.

A test calls ``agentfuzz_campaign(seed=…, …)`` and gets the campaign's ``agentfuzz.Report``. Each
test item plays from, or records into, its own folder of campaign cassettes, by default
``<test folder>/cassettes/<module stem>/<test name>/``: one folder per item, so pytest-xdist
workers never share a cassette file.

- offline (no ``--agentfuzz-base-url``): record mode ``none``, target and model from the
  cassettes' metadata (``runs.campaign.replayed``); an empty folder fails the test with the
  command that records it.
- live: the server from ``--agentfuzz-base-url``, the model from ``--agentfuzz-model`` or the
  first one ``/models`` lists, record mode ``--agentfuzz-record-mode``, where ``none`` means no
  cassette at all (just fuzz the server).

Like the plugin, this module is imported in every pytest run (the plugin's collector asks
``is_campaign_cassette``), so it imports only the standard library and pytest at the top. The
campaign itself is ``agentfuzz.run``'s, as ``agentfuzz fuzz`` runs it: its findings folded, one
per root cause, and ``summary.json`` beside them.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agentfuzz.tape.campaigns import is_campaign_cassette

if TYPE_CHECKING:
    from agentfuzz.output.findings.report import Report

__all__ = ["CampaignRunner", "campaign_folder", "is_campaign_cassette"]

_TIMEOUT = 60.0
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_LONGEST_NAME = 100


def _safe(name: str) -> str:
    """``name`` as one folder name: ``test_x[a/b]`` -> ``test_x-a_b-<hash>``.

    Brackets become a dash and nothing; anything else outside ``[A-Za-z0-9_.-]`` becomes ``_``,
    and then a short hash of the original keeps two such names apart.
    """
    plain = name.replace("[", "-", 1).removesuffix("]") if name.endswith("]") else name
    safe = _UNSAFE.sub("_", plain).strip(".") or "_"
    if safe != plain or len(safe) > _LONGEST_NAME:
        digest = hashlib.sha1(name.encode()).hexdigest()[:8]
        safe = f"{safe[:_LONGEST_NAME]}-{digest}"
    return safe


def campaign_folder(item: pytest.Item) -> Path:
    """The default cassette folder of a test item: ``<folder>/cassettes/<stem>/<name>/``.

    The name is the item's part of its node id after the module (``TestX.test_y[0]`` in a
    class), so two items never share a folder.
    """
    inner = item.nodeid.split("::", 1)[1] if "::" in item.nodeid else item.name
    return item.path.parent / "cassettes" / item.path.stem / _safe(inner.replace("::", "."))


@dataclass(frozen=True)
class CampaignRunner:
    """The function ``agentfuzz_campaign`` returns, bound to one test item and its options."""

    item: pytest.Item
    out: Path
    base_url: str | None
    model: str | None
    record_mode: str

    def __call__(
        self,
        *,
        seed: int,
        profile: str = "default",
        modes: Sequence[tuple[str, bool]] = (("chat", False),),
        kinds: Sequence[str] = ("synthetic",),
        max_examples: int = 20,
        trials: int | str = 1,
        cassettes: Path | None = None,
    ) -> Report:
        """Run one seeded campaign through this item's cassettes; return its report, folded
        as ``agentfuzz.run`` folds it.

        Bundles go to a fresh folder under the test's ``tmp_path``. A request the cassettes
        lack, an unreadable cassette or an unreachable server fails the test with one line.
        """
        from agentfuzz import FuzzConfig, run
        from agentfuzz.errors import CassetteError, NotInCassette, ProfileError, TargetUnreachable
        from agentfuzz.request.profiles import load_profile

        if isinstance(trials, str) and trials != "auto":
            raise ValueError(f"trials={trials!r}: a number of tries, or 'auto'")
        folder = cassettes if cassettes is not None else campaign_folder(self.item)
        failure = ""
        try:
            fields = self._target(folder) | {
                "profile": load_profile(profile),
                "out": self._fresh_out(seed),
                "modes": tuple(modes),
                "kinds": tuple(kinds),
                "max_examples": max_examples,
                "seed": seed,
                "trials": trials,
                "api_key": os.environ.get("OPENAI_API_KEY"),
                "timeout": _TIMEOUT,
                # The test that ran the campaign is how it is run again.
                "command": shlex.join(["pytest", self.item.nodeid]),
            }
            return run(FuzzConfig(**fields))
        except (NotInCassette, CassetteError, TargetUnreachable, ProfileError) as exc:
            failure = str(exc)
        # Failed outside the handler, so pytest shows the one line and no chained exception.
        pytest.fail(failure, pytrace=False)

    def _target(self, folder: Path) -> dict[str, Any]:
        """Where the campaign's requests go, as ``FuzzConfig`` fields."""
        if self.base_url is None:
            from agentfuzz.runs.campaign import replayed

            tape = replayed(folder, "none")
            if tape is None or tape.model is None:
                pytest.fail(self._how_to_record(folder), pytrace=False)
            return {
                "base_url": tape.base_url,
                "model": tape.model,
                "cassette": folder,
                "record_mode": "none",
            }
        live: dict[str, Any] = {"base_url": self.base_url, "model": self._live_model()}
        if self.record_mode == "none":
            # Live with nothing to record: fuzz the server, with the example database the
            # plugin's Hypothesis tests share (or none, when the ini option turns that off).
            shared = self.item.config.getini("agentfuzz_shared_database")
            database = self.item.config.rootpath / ".agentfuzz" / "examples" if shared else None
            return live | {"database": database}
        return live | {"cassette": folder, "record_mode": self.record_mode}

    def _how_to_record(self, folder: Path) -> str:
        shown = os.path.relpath(folder, self.item.config.invocation_params.dir)
        options = ["--agentfuzz-base-url", "URL", "--agentfuzz-record-mode", "once"]
        command = shlex.join(["pytest", self.item.nodeid, *options])
        return f"no campaign cassettes in {shown}; record them with: {command}"

    def _live_model(self) -> str:
        if self.model is not None:
            return self.model
        from agentfuzz.errors import ModelListError, TargetUnreachable
        from agentfuzz.wire.target import first_model

        assert self.base_url is not None
        try:
            return first_model(self.base_url, os.environ.get("OPENAI_API_KEY"), _TIMEOUT)
        except (ModelListError, TargetUnreachable) as exc:
            pytest.fail(f"{exc}; pass --agentfuzz-model", pytrace=False)

    def _fresh_out(self, seed: int) -> Path:
        """A bundle folder of its own for each campaign a test runs."""
        out = self.out / f"seed-{seed}"
        number = 1
        while out.exists():
            number += 1
            out = self.out / f"seed-{seed}-{number}"
        return out
