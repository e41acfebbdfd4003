"""A base URL without ``/v1``: the target serves nothing there, which is no finding, and the one
line says what to try instead."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentfuzz.cli import main
from agentfuzz.cli._common import url_hint
from agentfuzz.reference import serve_in_thread


@pytest.fixture(scope="module")
def root() -> Iterator[str]:
    """A running reference server's address, without the ``/v1`` it serves under."""
    with serve_in_thread("fixed") as url:
        yield url.removesuffix("/v1")


def _fuzz(capsys: pytest.CaptureFixture[str], out: Path, *argv: str) -> tuple[int, list[str]]:
    quick = ["--api", "chat", "--no-stream", "--max-examples", "3", "--quiet"]
    code = main(["fuzz", *argv, *quick, "--out", str(out)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err.strip().splitlines()


def test_every_request_not_found_is_no_finding_and_names_the_missing_v1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, root: str
) -> None:
    out = tmp_path / "out"
    code, lines = _fuzz(capsys, out, "--base-url", root, "--model", "m")
    assert code == 2
    (line,) = lines
    assert "nothing was tested" in line and f"lacks /v1: try {root}/v1" in line
    assert "--model" not in line
    assert not [p for p in out.iterdir() if p.is_dir()], "no bundle for a 404"


def test_the_model_list_not_found_names_the_missing_v1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, root: str
) -> None:
    code, lines = _fuzz(capsys, tmp_path / "out", "--base-url", root + "/")
    assert code == 2
    (line,) = lines
    assert line.startswith("agentfuzz: GET ") and f"lacks /v1: try {root}/v1" in line
    assert "pass --model" not in line


@pytest.mark.parametrize(
    "url", ["http://h:8000/v1", "http://h:8000/v1/", "https://h/openai/v1", "http://h/api/v2beta"]
)
def test_a_versioned_path_gets_no_hint(url: str) -> None:
    assert url_hint(url) is None


def test_the_hint_appends_v1_to_the_url_as_given() -> None:
    assert url_hint("http://h:8000/") == "the base URL probably lacks /v1: try http://h:8000/v1"
    assert url_hint("http://h:8000/openai") == (
        "the base URL probably lacks /v1: try http://h:8000/openai/v1"
    )
