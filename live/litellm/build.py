"""Build the live LiteLLM proxy target into a cache folder: a venv holding `litellm[proxy]`.

Stdlib only, so any python3.11 runs it. The step ends by writing a marker holding its spec; a step
whose marker is missing or stale is redone from scratch, so an interrupted build heals on the next
run. Nothing here touches the project's own .venv.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEFAULT_CACHE = ROOT / ".cache" / "live-litellm"

# 1.107.0 was a compromised release (pulled from PyPI). Newer releases pin companion distributions
# (`litellm-proxy`, `litellm-proxy-extras` 0.4.113, `litellm-enterprise` 0.1.79.post2) that the
# index reached from here does not have: 1.108.7 is the newest whose `proxy` extra resolves.
PROXY = ["litellm[proxy]==1.108.7"]

# Text pip prints when it cannot talk to an index at all (as opposed to a resolution error).
NETWORK_MARKERS = (
    "NewConnectionError",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "ConnectTimeoutError",
    "No route to host",
    "ProxyError",
)


class BuildError(Exception):
    """A step failed; the message is the one line shown to the user."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def run(cmd: list[str], log: Path, what: str) -> str:
    """Run a command with its output appended to the build log; raise BuildError on failure."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    with log.open("a") as fh:
        fh.write(f"$ {' '.join(cmd)}\n{output}\n")
    if proc.returncode != 0:
        if any(marker in output for marker in NETWORK_MARKERS):
            raise BuildError(f"{what}: cannot reach the package index (see {log})", code=3)
        raise BuildError(f"{what} failed with exit {proc.returncode} (see {log})")
    return proc.stdout


def is_done(marker: Path, spec: object) -> bool:
    """Whether a step's marker exists and records the same spec as now."""
    try:
        return bool(json.loads(marker.read_text()) == spec)
    except (OSError, ValueError):
        return False


def mark_done(marker: Path, spec: object) -> None:
    marker.write_text(json.dumps(spec))


def probe_index(cache: Path, log: Path) -> None:
    """Fail fast, with exit 3, when the package index cannot be reached at all."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--retries", "1"]
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        # The bare distribution is one small wheel: enough to prove the index answers.
        bare = PROXY[0].replace("[proxy]", "")
        run([*cmd, "--timeout", "20", "-d", tmp, bare], log, "probing the package index")


def build_venv(cache: Path, log: Path) -> None:
    """Create venv/ with the pinned LiteLLM proxy and check that its CLI imports."""
    venv, marker = cache / "venv", cache / "venv.done"
    spec = {"proxy": PROXY}
    if is_done(marker, spec):
        print("venv: up to date")
        return
    probe_index(cache, log)
    marker.unlink(missing_ok=True)
    shutil.rmtree(venv, ignore_errors=True)
    started = time.monotonic()
    run([sys.executable, "-m", "venv", str(venv)], log, "creating the venv")
    python = str(venv / "bin" / "python")
    print(f"venv: installing {' '.join(PROXY)} (about a minute)", flush=True)
    run([python, "-m", "pip", "install", *PROXY], log, "pip install litellm[proxy]")
    check = "import litellm.proxy.proxy_cli, importlib.metadata as m; print(m.version('litellm'))"
    version = run([python, "-c", check], log, "importing the litellm proxy").strip()
    wanted = PROXY[0].split("==")[1]
    if version != wanted:
        raise BuildError(f"venv: litellm is {version!r}, not {wanted}")
    mark_done(marker, spec)
    print(f"venv: done in {time.monotonic() - started:.0f} s")


def size_of(path: Path) -> str:
    total = sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())
    return f"{total / 2**20:,.0f} MB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="the cache folder")
    args = parser.parse_args(argv)
    cache = args.cache.resolve()
    try:
        cache.mkdir(parents=True, exist_ok=True)
        build_venv(cache, cache / "build.log")
    except BuildError as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return exc.code
    except OSError as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return 1
    print(f"ready: {cache} (venv {size_of(cache / 'venv')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
