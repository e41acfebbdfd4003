"""Build the live Portkey gateway target into a cache folder: `@portkey-ai/gateway`, from npm.

Stdlib only, so any python3.11 runs it; it needs `node` and `npm` on the PATH. The step writes
`package.json` into the cache, runs `npm install` there and ends by writing a marker holding its
spec; a step whose marker is missing or stale is redone from scratch, so an interrupted build heals
on the next run. Nothing here touches the project's own .venv.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _kit import BuildError, build_main, is_done, mark_done

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEFAULT_CACHE = ROOT / ".cache" / "live-portkey"

GATEWAY = "@portkey-ai/gateway"
VERSION = "1.15.2"
# The gateway asks for `@hono/node-server ^1.3.3`; what that resolves to now answers every streamed
# request and `GET /v1/models` with a 500 (`TypeError: immutable`: it writes to the immutable
# headers of a fetch Response, an open upstream bug). 1.14.1 is the last release without it.
OVERRIDES = {"@hono/node-server": "1.14.1"}

# What npm prints when it cannot talk to the registry at all (as opposed to a resolution error).
NPM_NETWORK_MARKERS = (
    "ECONNREFUSED",
    "ENOTFOUND",
    "EAI_AGAIN",
    "ETIMEDOUT",
    "ENETUNREACH",
    "EHOSTUNREACH",
    "ECONNRESET",
    "ERR_SOCKET_TIMEOUT",
)
# Give up quickly on a dead registry: by default npm retries for over a minute.
NPM_OPTIONS = [
    "--no-audit",
    "--no-fund",
    "--fetch-retries=1",
    "--fetch-retry-mintimeout=2000",
    "--fetch-retry-maxtimeout=5000",
    "--fetch-timeout=30000",
]


def package_json() -> dict[str, Any]:
    """The cache's package.json: the gateway, pinned, with the override that keeps it working."""
    return {
        "name": "live-portkey",
        "version": "0.0.0",
        "private": True,
        "description": "agentfuzz's live Portkey gateway target (built by live/portkey/build.py)",
        "dependencies": {GATEWAY: VERSION},
        "overrides": dict(OVERRIDES),
    }


def install_command() -> list[str]:
    # --ignore-scripts: the gateway's own postinstall runs patch-package for its development tree;
    # nothing it patches is used by the built server, and no install script need run here.
    return ["npm", "install", "--ignore-scripts", *NPM_OPTIONS]


def npm(cmd: list[str], cwd: Path, log: Path, what: str) -> str:
    """Run an npm command, its output appended to the build log; BuildError on failure (code 3
    when the registry cannot be reached)."""
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    except FileNotFoundError:
        raise BuildError(f"{what}: no {cmd[0]} on the PATH (node 18 or newer is needed)") from None
    output = proc.stdout + proc.stderr
    with log.open("a") as fh:
        fh.write(f"$ {' '.join(cmd)}\n{output}\n")
    if proc.returncode != 0:
        if any(marker in output for marker in NPM_NETWORK_MARKERS):
            raise BuildError(f"{what}: cannot reach the npm registry (see {log})", code=3)
        raise BuildError(f"{what} failed with exit {proc.returncode} (see {log})")
    return proc.stdout


def installed_version(cache: Path, package: str) -> str | None:
    path = cache / "node_modules" / package / "package.json"
    try:
        version = json.loads(path.read_text()).get("version")
    except (OSError, ValueError):
        return None
    return version if isinstance(version, str) else None


def check_versions(cache: Path) -> None:
    for package, wanted in [(GATEWAY, VERSION), *OVERRIDES.items()]:
        version = installed_version(cache, package)
        if version != wanted:
            raise BuildError(f"gateway: {package} is {version!r}, not {wanted}")


def build_gateway(cache: Path, log: Path) -> None:
    """Install the pinned gateway into cache/node_modules and check the versions installed."""
    marker = cache / "gateway.done"
    spec = {"package.json": package_json(), "scripts": "ignored"}
    if is_done(marker, spec):
        print("gateway: up to date")
        return
    # One small metadata request: enough to prove the registry answers, before wiping anything.
    probe = ["npm", "view", f"{GATEWAY}@{VERSION}", "version", "--prefer-online", *NPM_OPTIONS]
    npm(probe, cache, log, "probing the npm registry")
    marker.unlink(missing_ok=True)
    shutil.rmtree(cache / "node_modules", ignore_errors=True)
    (cache / "package-lock.json").unlink(missing_ok=True)
    (cache / "package.json").write_text(json.dumps(package_json(), indent=2) + "\n")
    started = time.monotonic()
    print(f"gateway: npm install {GATEWAY}@{VERSION} (about 30 s)", flush=True)
    npm(install_command(), cache, log, "npm install")
    check_versions(cache)
    if not (cache / "node_modules" / GATEWAY / "build" / "start-server.js").is_file():
        raise BuildError(f"gateway: {GATEWAY} has no build/start-server.js")
    mark_done(marker, spec)
    print(f"gateway: done in {time.monotonic() - started:.0f} s")


def main(argv: list[str] | None = None) -> int:
    return build_main(__doc__.splitlines()[0], DEFAULT_CACHE, build_gateway, "node_modules", argv)


if __name__ == "__main__":
    sys.exit(main())
