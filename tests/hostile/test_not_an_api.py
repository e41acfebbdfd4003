"""A server that is no OpenAI-compatible API tested nothing (issue 41 item 3).

Against ``python -m http.server`` every POST is a 501 with an HTML page: each became an
``error`` finding with a bundle, and the run exited 1. Such a target gets one line saying it is
not an OpenAI-compatible API, exit 2 and no bundle, and its run ends after a few requests.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

import pytest

from .servers import Request, models_list, raw_server, respond, run_bounded

# A campaign in a child process (a few seconds each). ``run_bounded`` leaves the child's pipe
# for the collector to close: its ResourceWarning is the helper's, not this test's.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

_PAGE = (
    '<!DOCTYPE HTML>\n<html lang="en">\n<head><title>Error response</title></head>\n'
    "<body><h1>Error response</h1><p>Error code: 501</p>"
    "<p>Message: Unsupported method ('POST').</p></body></html>\n"
)


def _http_server(listed: bool) -> object:
    """``python -m http.server``'s answers: 501 and a page to any POST; to ``GET /v1/models``
    a model list (``listed``) or a 404 page."""

    def handler(request: Request, out: BinaryIO) -> None:
        if request.method == "POST":
            respond(out, 501, _PAGE, content_type="text/html;charset=utf-8")
        elif listed:
            models_list(out, "foo")
        else:
            respond(out, 404, _PAGE.replace("501", "404"), content_type="text/html")

    return handler


@pytest.mark.parametrize("listed", [False, True], ids=["models-404", "models-listed"])
def test_an_html_501_server_is_not_an_api_exit_2_no_bundle(tmp_path: Path, listed: bool) -> None:
    out = tmp_path / "out"
    with raw_server(_http_server(listed)) as server:  # type: ignore[arg-type]
        argv = ["fuzz", "--base-url", server.base_url, "--model", "foo", "--out", str(out)]
        argv += ["--max-examples", "50", "--timeout", "5", "--max-time", "60", "--seed", "1"]
        outcome = run_bounded(argv, limit_s=90)
        posts = [r for r in server.requests if r.method == "POST"]
    assert outcome.code == 2, outcome.output
    said = [line for line in outcome.output.splitlines() if "not an OpenAI-compatible API" in line]
    assert len(said) == 1, outcome.output
    assert server.base_url in said[0] and "501 and an HTML page" in said[0]
    assert "Traceback" not in outcome.output and "<html" not in outcome.output.lower()
    assert not list(out.glob("*/repro.json")), sorted(p.name for p in out.iterdir())
    # Each of the four modes stopped after its first few answers, not after 50 examples.
    assert len(posts) <= 4 * 8, len(posts)
    assert outcome.seconds < 60 + 5 + 20
