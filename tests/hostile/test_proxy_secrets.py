"""The proxy in front of a server that echoes the request's headers: the client's key and secret
headers reach no file the proxy writes (issue 41, item 14; it had written the key into 7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import BinaryIO

import httpx
import pytest

from tests.hostile.proxying import proxy_process
from tests.hostile.servers import Request, models_list, raw_server, respond

pytestmark = pytest.mark.slow  # a proxy in a child process (a few seconds)

KEY = "sk-CLIENTKEY-0123456789"
TOKEN = "x-api-key-value-42"


def _echo(request: Request, out: BinaryIO) -> None:
    if request.method == "GET":
        models_list(out, "m")
        return
    said = {"error": {"message": f"bad request; headers were {request.headers}"}}
    respond(out, 500, json.dumps(said))


def test_the_clients_secrets_are_masked_in_what_the_proxy_writes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    headers = {"Authorization": f"Bearer {KEY}", "X-Api-Key": TOKEN}
    with raw_server(_echo) as server, proxy_process(server.base_url, out) as proxy:
        answer = httpx.post(f"{proxy.url()}/chat/completions", json=body, headers=headers)
        assert answer.status_code == 500 and KEY in answer.text  # the client gets it as sent
        proxy.line_with("error")  # judged: a finding was written
    written = [p for p in out.rglob("*") if p.is_file()]
    assert written, proxy.output
    leaks = [f"{p}: {s}" for p in written for s in (KEY, TOKEN) if s.encode() in p.read_bytes()]
    assert leaks == []
    assert KEY not in proxy.output and TOKEN not in proxy.output
