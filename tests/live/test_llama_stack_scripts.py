"""The live Llama Stack scripts fail in one line, write the run config the README describes, and
the fuzz profile loads.

These run without Llama Stack: the index is a closed port on 127.0.0.1, the cache an empty folder.
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

from agentfuzz.request.profiles import load_profile
from agentfuzz.request.surface import KNOBS

LIVE = Path(__file__).resolve().parents[2] / "live" / "llama-stack"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"live_llama_stack_{name}", LIVE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(LIVE / script), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ), timeout=120)


@pytest.mark.usefixtures("offline")
def test_build_says_it_cannot_reach_the_index(tmp_path: Path) -> None:
    build = _load("build")
    if not build.python_candidates():
        pytest.skip("no Python 3.12 here: the build stops before the index")
    done = _run("build.py", "--cache", str(tmp_path / "cache"))
    assert done.returncode == 3
    (line,) = done.stderr.strip().splitlines()
    assert "cannot reach the package index" in line
    assert not (tmp_path / "cache" / "venv.done").exists()


def test_build_without_python_3_12_is_one_line(tmp_path: Path) -> None:
    build = _load("build")
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path), "PYENV_ROOT": str(tmp_path / "pyenv")}
    assert build.python_candidates(env) == []
    with pytest.raises(build.BuildError, match=r"no Python 3\.12 found"):
        build.find_python(tmp_path / "build.log", env)


def test_pyenv_versions_are_candidates(tmp_path: Path) -> None:
    build = _load("build")
    for version in ("3.11.7", "3.12.1", "3.12.9"):
        (tmp_path / "versions" / version / "bin").mkdir(parents=True)
    env = {"PATH": "", "HOME": "/nowhere", "PYENV_ROOT": str(tmp_path)}
    found = build.python_candidates(env)
    assert found == [tmp_path / "versions" / v / "bin" / "python3.12" for v in ("3.12.9", "3.12.1")]


def test_build_pins_one_exact_version() -> None:
    build = _load("build")
    server, mcp = build.SERVER
    name, version = server.split("==")
    assert name == "llama-stack" and version == "0.7.3"
    assert mcp == "mcp<2"  # mcp 2.x breaks the import of the llama CLI


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


def test_the_config_routes_one_registered_model_to_the_backend(tmp_path: Path) -> None:
    serve = _load("serve")
    config = serve.stack_config(tmp_path, "http://127.0.0.1:8000/v1/", "kimi-k2-reference")
    assert {"inference", "responses", "vector_io", "tool_runtime"} <= set(config["apis"])
    (inference,) = config["providers"]["inference"]
    assert inference["provider_type"] == "remote::vllm"
    assert inference["config"]["base_url"] == "http://127.0.0.1:8000/v1"
    assert "vector_io" not in config["providers"] and "tool_runtime" not in config["providers"]
    (model,) = config["registered_resources"]["models"]
    assert model["provider_id"] == inference["provider_id"] == serve.PROVIDER
    assert model["provider_model_id"] == "kimi-k2-reference"
    assert serve.stack_model("kimi-k2-reference") == "vllm/kimi-k2-reference"
    assert config["server"]["host"] == "127.0.0.1"


def test_everything_the_stack_stores_stays_in_its_state_folder(tmp_path: Path) -> None:
    serve = _load("serve")
    config = serve.stack_config(tmp_path, "http://127.0.0.1:8000/v1", "m")
    paths = [b["db_path"] for b in config["storage"]["backends"].values()]
    (files,) = config["providers"]["files"]
    paths.append(files["config"]["storage_dir"])
    assert paths and all(Path(p).is_relative_to(tmp_path) for p in paths)
    backends = set(config["storage"]["backends"])
    references = [s["backend"] for s in config["storage"]["stores"].values()]
    assert set(references) <= backends


def test_the_config_file_is_json_so_yaml_reads_it_back(tmp_path: Path) -> None:
    serve = _load("serve")
    config = serve.stack_config(tmp_path, "http://127.0.0.1:8000/v1", "m")
    path = tmp_path / "config.yaml"
    serve.write_config(path, config)
    assert json.loads(path.read_text()) == config


def test_the_stack_runs_offline_on_its_own_port_without_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve = _load("serve")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-reach-anything")
    monkeypatch.setenv("LLAMA_STACK_PORT", "1")
    env = serve.stack_env(tmp_path)
    assert "OPENAI_API_KEY" not in env and "LLAMA_STACK_PORT" not in env
    assert env["LLAMA_STACK_CONFIG_DIR"] == str(tmp_path)
    command = serve.stack_command(tmp_path, tmp_path / "config.yaml", 4321)
    assert command[:3] == [str(tmp_path / "venv" / "bin" / "llama"), "stack", "run"]
    assert command[command.index("--port") + 1] == "4321"


def test_the_campaign_reads_its_odd_backends() -> None:
    campaign = _load("campaign")
    assert campaign.odd_backends("calls-say-stop, chat-no-done,") == [
        "calls-say-stop",
        "chat-no-done",
    ]
    assert campaign.odd_backends("none") == campaign.odd_backends("") == []
    assert campaign.odd_time(600) == 300 and campaign.odd_time(10) == 30


def test_the_profile_loads_and_leaves_out_what_the_stack_refuses() -> None:
    profile = load_profile("llama-stack")
    assert profile.name == "llama-stack"
    for dimension in ("custom_tools", "hosted_tools", "truncation"):
        assert dimension not in profile.surface
    for dimension in ("previous_response_id", "store", "max_tool_calls", "long_text"):
        assert dimension in profile.surface
    assert profile.knobs == KNOBS
    assert not profile.namespace_tools
