"""The live LiteLLM scripts fail in one line, and write the proxy config the README describes.

These run without LiteLLM: the index is a closed port on 127.0.0.1, the cache an empty folder.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

LIVE = Path(__file__).resolve().parents[2] / "live" / "litellm"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"live_litellm_{name}", LIVE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(LIVE / script), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ), timeout=120)


@pytest.mark.usefixtures("offline")
def test_build_says_it_cannot_reach_the_index(tmp_path: Path) -> None:
    done = _run("build.py", "--cache", str(tmp_path / "cache"))
    assert done.returncode == 3
    (line,) = done.stderr.strip().splitlines()
    assert "cannot reach the package index" in line
    assert not (tmp_path / "cache" / "venv.done").exists()


def test_serving_an_unbuilt_cache_is_one_line(tmp_path: Path) -> None:
    backend = ["--backend-url", "http://127.0.0.1:9/v1", "--backend-model", "m"]
    done = _run("serve.py", "--cache", str(tmp_path), *backend)
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert "is not built" in line and "build.py" in line


def test_serve_needs_a_backend() -> None:
    done = _run("serve.py", "--check")
    assert done.returncode == 2
    assert "--backend-url" in done.stderr and "Traceback" not in done.stderr


def test_the_config_routes_one_model_named_as_the_backend_one() -> None:
    serve = _load("serve")
    config = serve.proxy_config("http://127.0.0.1:8000/v1/", "kimi-k2-reference")
    (entry,) = config["model_list"]
    assert entry["model_name"] == "kimi-k2-reference"
    params = entry["litellm_params"]
    assert params["model"] == "openai/kimi-k2-reference"
    assert params["api_base"] == "http://127.0.0.1:8000/v1"
    assert params["use_chat_completions_api"] is True
    assert params["api_key"]
    passthrough = serve.proxy_config("http://127.0.0.1:8000/v1", "m", mode="passthrough")
    assert "use_chat_completions_api" not in passthrough["model_list"][0]["litellm_params"]


def test_an_alias_names_the_model_for_clients_and_routes_to_the_backend_name() -> None:
    serve = _load("serve")
    config = serve.proxy_config("http://127.0.0.1:8000/v1", "smollm2", "passthrough", "team-model")
    (entry,) = config["model_list"]
    assert entry["model_name"] == "team-model"
    assert entry["litellm_params"]["model"] == "openai/smollm2"
    with pytest.raises(ValueError, match="unknown mode"):
        serve.proxy_config("http://127.0.0.1:8000/v1", "m", "translate")


def test_the_config_file_is_json_so_yaml_reads_it_back(tmp_path: Path) -> None:
    serve = _load("serve")
    config = serve.proxy_config("http://127.0.0.1:8000/v1", "m")
    path = tmp_path / "proxy.yaml"
    serve.write_config(path, config)
    assert json.loads(path.read_text()) == config


def test_the_proxy_runs_offline_on_loopback_without_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve = _load("serve")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-reach-the-backend")
    env = serve.proxy_env()
    assert env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert "OPENAI_API_KEY" not in env
    command = serve.proxy_command(tmp_path, tmp_path / "proxy.yaml", 4321)
    assert command[0] == str(tmp_path / "venv" / "bin" / "litellm")
    assert command[command.index("--host") + 1] == "127.0.0.1"
    assert command[command.index("--port") + 1] == "4321"


def test_build_pins_one_exact_version() -> None:
    build = _load("build")
    (requirement,) = build.PROXY
    name, version = requirement.split("==")
    assert name == "litellm[proxy]"
    assert version and version != "1.107.0"  # the compromised release
