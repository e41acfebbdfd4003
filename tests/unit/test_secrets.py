"""The secrets a run knows are masked in every file it writes, at the one place files are
written (issue 41, item 14), and a write that fails leaves no ``.part`` behind (item 19)."""

from __future__ import annotations

import ast
import errno
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from agentfuzz.model import files, secrets
from agentfuzz.model.files import write_atomically
from agentfuzz.wire.transport._cassette_format import _ReadableYaml

PACKAGE = Path(__file__).resolve().parents[2] / "agentfuzz"
KEY, TEAM = "SECRETKEY123", "hush hush team"


@pytest.fixture(autouse=True)
def _known() -> Iterator[None]:
    secrets.remember(KEY, {"X-Team": TEAM, "Content-Type": "application/json", "X-Short": "ab"})
    yield
    secrets.forget_all()


def test_every_spelling_of_a_secret_is_masked() -> None:
    quoted = json.dumps({"echo": f'key "{KEY}" team {TEAM}é'}, ensure_ascii=True)
    assert KEY not in secrets.mask(quoted) and TEAM not in secrets.mask(quoted)
    odd = 'pa"ss<wo>rd'
    secrets.remember(odd)
    for spelled in (odd, json.dumps(odd)[1:-1], "pa&quot;ss&lt;wo&gt;rd", 'pa"ss&lt;wo&gt;rd'):
        assert secrets.mask(f"<p>{spelled}</p>") == "<p>MASKED</p>"


def test_short_values_and_content_headers_are_left_alone() -> None:
    text = '{"content-type": "application/json", "x-short": "ab", "ok": true}'
    assert secrets.mask(text) == text


def test_write_atomically_masks_whatever_it_writes(tmp_path: Path) -> None:
    path = tmp_path / "REPORT.md"
    write_atomically(path, f"the server said: Authorization: Bearer {KEY}, x-team: {TEAM}\n")
    assert path.read_text() == "the server said: Authorization: Bearer MASKED, x-team: MASKED\n"


def test_a_cassette_folding_a_secret_across_lines_still_masks_it() -> None:
    """The YAML emitter folds long strings at spaces, inside a secret that has some."""
    body = " ".join(["word"] * 17 + [TEAM] + ["word"] * 30)
    data = {"body": {"string": body}, "raw": body.encode()}
    text = _ReadableYaml.serialize(data)
    assert "MASKED" in text
    assert "hush" not in text
    secrets.forget_all()
    # Unmasked, the emitter does split it: a mask of the written text alone would miss it.
    unmasked = _ReadableYaml.serialize(data)
    assert "hush" in unmasked and TEAM not in unmasked


def test_a_failed_write_leaves_the_old_file_and_no_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "repro.json"
    write_atomically(path, "old")

    def full(sink: IO[str], text: str) -> None:
        sink.write(text[:1])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files, "_fill", full)
    with pytest.raises(OSError) as raised:
        write_atomically(path, "new")
    assert files.disk_full(raised.value) and raised.value.filename == str(path)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".repro.json")] == []


# Files written other than through ``write_atomically``, each with why it holds no secret.
_OTHER_WRITERS = {
    "cli/_common.py": "a constant pytest.ini, and an empty probe of --out",
    "runs/workers.py": "the shards' pytest output, written by the child process itself",
    "cli/puppet.py": "puppet vllm-args --export copies agentfuzz's own processor files",
}


def _writes(path: Path) -> bool:
    """Whether ``path`` writes a file itself (``write_text``, ``write_bytes``, ``open`` for
    writing)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
        if name in ("write_text", "write_bytes"):
            return True
        given = [*node.args, *(k.value for k in node.keywords)]
        modes = [a.value for a in given if isinstance(a, ast.Constant)]
        if name == "open" and any(isinstance(m, str) and set(m) & set("wax+") for m in modes):
            return True
    return False


def test_every_file_is_written_through_the_one_place_that_masks() -> None:
    """A writer added later cannot forget the mask: it writes through ``write_atomically``."""
    writers = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.parts[len(PACKAGE.parts)] != "reference" and _writes(path)
    }
    assert writers - {"model/files.py"} <= set(_OTHER_WRITERS)
