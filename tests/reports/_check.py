"""What the report tests share: JUnit validation against tests/reports/junit.xsd, and headless
Chromium, which turns an HTML report into what a person sees (its rendered text, a screenshot)."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

XSD = Path(__file__).with_name("junit.xsd")


def assert_valid_junit(path: Path) -> None:
    """``path`` validates against the common JUnit schema (needs lxml, in the dev extra)."""
    etree = pytest.importorskip("lxml.etree", reason="lxml (the dev extra) validates JUnit XML")
    schema = etree.XMLSchema(etree.parse(str(XSD)))
    doc = etree.parse(str(path))
    assert schema.validate(doc), schema.error_log


def chromium() -> str:
    """The Chromium binary, or skip: CI machines may lack Debian's ``chromium`` package."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no chromium binary on PATH (apt-get install -y chromium)")


def _run(binary: str, profile: Path, *args: str) -> str:
    command = [
        binary,
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--no-first-run",
        # The machine's network is closed: nothing in the background may try to reach out.
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def rendered_dom(page: Path, work: Path) -> str:
    """The DOM after Chromium loaded and laid out ``page``."""
    return _run(chromium(), work / "chromium-profile", "--dump-dom", page.resolve().as_uri())


def screenshot(page: Path, png: Path, work: Path, height: int = 2000) -> Path:
    """A 1280-wide screenshot of ``page``, kept at ``png``."""
    _run(
        chromium(),
        work / "chromium-profile",
        f"--screenshot={png}",
        f"--window-size=1280,{height}",
        page.resolve().as_uri(),
    )
    assert png.is_file() and png.stat().st_size > 10_000
    return png


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.tags: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._hidden += tag in ("style", "script", "title")

    def handle_endtag(self, tag: str) -> None:
        self._hidden -= tag in ("style", "script", "title")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def visible(dom: str) -> tuple[str, list[str]]:
    """The text a page shows (whitespace collapsed) and every element tag in it."""
    parser = _Text()
    parser.feed(dom)
    return " ".join(" ".join(parser.parts).split()), parser.tags
