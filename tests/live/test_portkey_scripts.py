"""The live Portkey scripts fail in one line, pin what the README says, and route by headers.

These run without the gateway: the npm registry is a closed port on 127.0.0.1, the cache an empty
folder. The tests that start node itself skip where there is no node.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from agentfuzz.reference.behaviours import BEHAVIOURS
from agentfuzz.request.profiles import load_profile
from agentfuzz.request.surface import DIMENSIONS, KNOBS

LIVE = Path(__file__).resolve().parents[2] / "live" / "portkey"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"live_portkey_{name}", LIVE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(LIVE / script), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ), timeout=120)


@pytest.fixture
def npm_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """npm's registry is a closed port; its cache and config are empty folders of this test."""
    if shutil.which("npm") is None:
        pytest.skip("no npm on the PATH")
    with socket.socket() as sock:  # a port nothing listens on once this closes
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("npm_config_registry", f"http://127.0.0.1:{port}/")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    monkeypatch.setenv("npm_config_userconfig", os.devnull)
    monkeypatch.setenv("npm_config_update_notifier", "false")


@pytest.mark.usefixtures("npm_offline")
def test_build_says_it_cannot_reach_the_registry(tmp_path: Path) -> None:
    done = _run("build.py", "--cache", str(tmp_path / "cache"))
    assert done.returncode == 3, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "cannot reach the npm registry" in line
    assert not (tmp_path / "cache" / "gateway.done").exists()


@pytest.mark.usefixtures("npm_offline")
def test_the_campaign_skips_in_one_line_when_offline(tmp_path: Path) -> None:
    done = _run("campaign.py", "--cache", str(tmp_path / "cache"), "--skip-offline")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == (
        "live-portkey: skipped: cannot reach the npm registry to build the gateway"
    )
    assert "Traceback" not in done.stderr


def test_serving_an_unbuilt_cache_is_one_line(tmp_path: Path) -> None:
    done = _run("serve.py", "--cache", str(tmp_path))
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert "is not built" in line and "build.py" in line


def test_the_check_needs_a_backend() -> None:
    done = _run("serve.py", "--check")
    assert done.returncode == 2
    assert "--backend-url" in done.stderr and "Traceback" not in done.stderr


def test_the_package_pins_the_gateway_and_the_web_server() -> None:
    build = _load("build")
    package = build.package_json()
    assert package["private"] is True
    assert package["dependencies"] == {"@portkey-ai/gateway": "1.15.2"}
    # Newer @hono/node-server releases answer every stream and GET /v1/models with a 500.
    assert package["overrides"] == {"@hono/node-server": "1.14.1"}
    assert json.loads(json.dumps(package)) == package
    command = build.install_command()
    assert command[:2] == ["npm", "install"]
    assert "--ignore-scripts" in command


def test_the_versions_installed_are_checked(tmp_path: Path) -> None:
    build = _load("build")
    for package, version in (("@portkey-ai/gateway", "1.15.2"), ("@hono/node-server", "1.15.0")):
        folder = tmp_path / "node_modules" / package
        folder.mkdir(parents=True)
        (folder / "package.json").write_text(json.dumps({"version": version}))
    with pytest.raises(build.BuildError) as raised:
        build.check_versions(tmp_path)
    assert str(raised.value) == "gateway: @hono/node-server is '1.15.0', not 1.14.1"


def test_the_gateway_runs_node_itself_on_loopback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve = _load("serve")
    command = serve.gateway_command(tmp_path, 4321)
    assert command[0] == "node"
    preload = Path(command[command.index("--require") + 1])
    assert preload.name == "loopback.cjs" and preload.is_file()
    assert command[-3:] == [
        str(tmp_path / "node_modules/@portkey-ai/gateway/build/start-server.js"),
        "--port=4321",
        "--headless",
    ]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-reach-the-backend")
    assert "OPENAI_API_KEY" not in serve.gateway_env()


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on the PATH")
def test_the_preload_makes_a_server_listen_on_loopback_only() -> None:
    serve = _load("serve")
    # Listen the way the gateway's web server does: a port and no host.
    script = (
        "const s = require('http').createServer();"
        "s.listen(0, undefined, () => { console.log(JSON.stringify(s.address())); s.close(); });"
    )
    done = subprocess.run(
        ["node", "--require", str(serve.LOOPBACK), "-e", script],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["address"] == "127.0.0.1"


def test_requests_are_routed_by_two_headers() -> None:
    serve = _load("serve")
    backend = "http://127.0.0.1:8000/v1/"
    assert serve.route_headers(backend) == {
        "x-portkey-provider": "openai",
        "x-portkey-custom-host": "http://127.0.0.1:8000/v1",
    }
    assert serve.header_options(backend) == [
        "-H",
        "x-portkey-provider: openai",
        "-H",
        "x-portkey-custom-host: http://127.0.0.1:8000/v1",
    ]


def test_the_odd_shape_backends_are_reference_profiles() -> None:
    campaign = _load("campaign")
    assert set(campaign.ODD) <= set(BEHAVIOURS)
    assert all(api in ("chat", "responses") for api, _, _ in campaign.ODD.values())
    assert campaign.odd_backends(campaign.DEFAULT_ODD) == ["calls-say-stop", "item-ids-shared"]
    assert campaign.odd_backends("") == []
    with pytest.raises(Exception, match="unknown odd-shape backend"):
        campaign.odd_backends("fixed")


def test_a_planted_fault_is_told_from_the_gateways_findings() -> None:
    campaign = _load("campaign")
    _, _, planted = campaign.ODD["item-ids-shared"]
    found = [
        "consistency:shared_item_id",
        "identity:message:id",
        "error:http_status:500:eb17cf",
        "consistency:shared_item_idx",
    ]
    passed, other = campaign.split_planted(found, planted)
    assert passed == ["consistency:shared_item_id", "identity:message:id"]
    assert other == ["error:http_status:500:eb17cf", "consistency:shared_item_idx"]


def test_the_campaign_fuzzes_with_the_portkey_profile() -> None:
    campaign = _load("campaign")
    args = campaign.parser().parse_args([])
    assert args.profile == "portkey"
    assert args.workers == 1


def test_the_portkey_profile_loads_and_leaves_out_what_the_gateway_drops() -> None:
    profile = load_profile("portkey")
    assert profile.name == "portkey"
    # The openai provider's parameter tables drop every server extension's fields.
    extensions = {name for name, d in DIMENSIONS.items() if d.extension}
    assert extensions == {"sampler_extensions", "vllm_extensions", "llamacpp_extensions"}
    assert not extensions & set(profile.surface)
    assert set(profile.surface) == set(DIMENSIONS) - extensions
    # Every knob's fields are forwarded as sent, so each is claimed.
    assert set(profile.knobs) == set(KNOBS)
