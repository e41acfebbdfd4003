"""The live llama.cpp scripts fail in one line, skip offline, and start and stop a server cleanly.

These run without llama.cpp: the index is a closed port on 127.0.0.1, the cache an empty folder or
one whose venv python is a stand-in that serves `/v1/models` on the port it is given.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path
from types import ModuleType

import pytest

LIVE = Path(__file__).resolve().parents[2] / "live" / "llamacpp"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(LIVE / script), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ), timeout=300)


def _serve_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("llamacpp_serve", LIVE / "serve.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake_cache(tmp_path: Path, body: str) -> Path:
    """A cache that looks built, whose venv python runs `body` with the server's argv."""
    cache = tmp_path / "cache"
    (cache / "venv" / "bin").mkdir(parents=True)
    (cache / "model").mkdir()
    (cache / "model" / MODEL_FILE).write_bytes(b"GGUF")
    for step in ("venv", "model"):
        (cache / f"{step}.done").write_text("{}")
    python = cache / "venv" / "bin" / "python"
    python.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
    python.chmod(0o755)
    return cache


FAKE_SERVER = """
    import http.server, json, os, sys
    argv = sys.argv[1:]
    assert argv[:2] == ["-m", "llama_cpp.server"], argv
    port = int(argv[argv.index("--port") + 1])
    with open("pid", "w") as fh:
        fh.write(str(os.getpid()))

    class Models(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            alias = argv[argv.index("--model_alias") + 1]
            body = json.dumps({"object": "list", "data": [{"id": alias}]})
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.end_headers()
            self.wfile.write(body.encode())

    http.server.HTTPServer(("127.0.0.1", port), Models).serve_forever()
"""


@pytest.mark.usefixtures("offline")
def test_a_stale_marker_is_not_taken_for_a_build(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "venv.done").write_text(json.dumps({"server": ["llama-cpp-python==0.0.1"]}))
    done = _run("build.py", "--cache", str(cache))
    assert done.returncode == 3
    assert "venv: up to date" not in done.stdout


def test_a_cache_without_its_model_file_is_not_built(tmp_path: Path) -> None:
    cache = _fake_cache(tmp_path, FAKE_SERVER)
    (cache / "model" / MODEL_FILE).unlink()
    done = _run("serve.py", "--cache", str(cache))
    assert done.returncode == 1
    assert MODEL_FILE in done.stderr and "Traceback" not in done.stderr


def test_running_yields_the_v1_url_once_models_answer_and_stops_the_server(
    tmp_path: Path,
) -> None:
    cache = _fake_cache(tmp_path, FAKE_SERVER)
    serve = _serve_module()
    with serve.running(cache, timeout=30) as base_url:
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        with urllib.request.urlopen(f"{base_url}/models", timeout=5) as response:
            assert json.load(response)["data"][0]["id"] == "smollm2"
        pid = int((cache / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_server_that_exits_while_starting_is_one_error_naming_the_log(tmp_path: Path) -> None:
    cache = _fake_cache(tmp_path, "import sys\nprint('boom')\nsys.exit(7)\n")
    serve = _serve_module()
    failed = pytest.raises(serve.ServerError, match=r"exited with 7 .*server\.log")
    with failed, serve.running(cache, timeout=30):
        pass  # pragma: no cover
    assert "boom" in (cache / "server.log").read_text()


def test_the_server_command_names_the_flags_llama_cpp_server_takes(tmp_path: Path) -> None:
    argv = _serve_module().server_command(tmp_path, 8123)
    assert argv[1:3] == ["-m", "llama_cpp.server"]
    flags = dict(zip(argv[3::2], argv[4::2], strict=True))
    assert flags["--chat_format"] == "chatml-function-calling"
    assert flags["--model_alias"] == "smollm2"
    assert flags["--host"] == "127.0.0.1" and flags["--port"] == "8123"
    assert flags["--model"].endswith(MODEL_FILE)
