"""One shard of a ``--workers N`` campaign, as a pytest item pytest-xdist can run anywhere.

Not a test of agentfuzz: ``agentfuzz.workers`` runs this file with ``pytest -n N``. Shard k runs
the ordinary engine with seed ``seed + k * 1000`` (or unseeded) into ``<out>/.shards/<k>/``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agentfuzz.engine import FuzzConfig, run
from agentfuzz.profiles import Profile


def _spec() -> dict[str, Any]:
    path = os.environ.get("AGENTFUZZ_SHARD_SPEC")
    if not path:
        pytest.skip("not run by agentfuzz --workers")
    spec: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return spec


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "shard" in metafunc.fixturenames:
        spec = _spec()
        metafunc.parametrize("shard", range(int(spec["workers"])))


def test_shard(shard: int) -> None:
    spec = _spec()
    seed = spec["seed"]
    out = Path(str(spec["out"])) / ".shards" / str(shard)
    database = spec["database"]
    config = FuzzConfig(
        base_url=str(spec["base_url"]),
        model=str(spec["model"]),
        profile=Profile.model_validate(spec["profile"]),
        out=out,
        modes=tuple((m[0], bool(m[1])) for m in spec["modes"]),
        kinds=tuple(spec["kinds"]),
        api_key=os.environ.get("OPENAI_API_KEY") or None,
        max_examples=int(spec["max_examples"]),
        seed=None if seed is None else int(seed) + shard * 1000,
        trials=spec["trials"],
        only=spec["only"],
        skip=tuple(spec["skip"]),
        timeout=float(spec["timeout"]),
        database=None if database is None else Path(str(database)),
    )
    report = run(config)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(report.summary()), encoding="utf-8")
