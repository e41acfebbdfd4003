"""Build the Codex CLI client into a cache folder: `npm install @openai/codex` (pinned).

Stdlib only, so any python3.11 runs it. npm fetches a platform binary package (~420 MB). The step
ends by writing a marker holding its spec; a missing or stale marker redoes it from scratch.
Exit 3 when the npm registry cannot be reached, 1 for any other failure.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _kit import BuildError, build_main, is_done, mark_done, run

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEFAULT_CACHE = ROOT / ".cache" / "live-codex"
CODEX = "@openai/codex@0.171.0"
# What npm prints when it cannot reach the registry at all.
_OFFLINE = ("ENOTFOUND", "ECONNREFUSED", "ETIMEDOUT", "EAI_AGAIN", "ENETUNREACH", "network")


def codex_binary(cache: Path) -> Path:
    return cache / "node_modules" / ".bin" / "codex"


def build(cache: Path, log: Path) -> None:
    marker = cache / "codex.done"
    spec = {"codex": CODEX}
    if is_done(marker, spec) and codex_binary(cache).exists():
        print("codex: up to date")
        return
    if shutil.which("npm") is None:
        raise BuildError("npm is not installed: Codex CLI comes from the npm registry")
    marker.unlink(missing_ok=True)
    shutil.rmtree(cache / "node_modules", ignore_errors=True)
    probe = subprocess.run(
        ["npm", "view", CODEX, "version", "--fetch-retries", "0", "--fetch-timeout", "20000"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        with log.open("a") as fh:
            fh.write(probe.stdout + probe.stderr)
        if any(word in probe.stderr for word in _OFFLINE):
            raise BuildError(f"cannot reach the npm registry (see {log})", code=3)
        raise BuildError(f"npm view {CODEX} failed (see {log})")
    started = time.monotonic()
    print(f"codex: npm install {CODEX} (~420 MB, under a minute)", flush=True)
    command = ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(cache), CODEX]
    run(command, log, "npm install")
    version = run([str(codex_binary(cache)), "--version"], log, "codex --version").strip()
    if not version.endswith(CODEX.rsplit("@", 1)[1]):
        raise BuildError(f"codex: installed {version!r}, not {CODEX}")
    mark_done(marker, spec)
    print(f"codex: {version}, done in {time.monotonic() - started:.0f} s")


def main(argv: list[str] | None = None) -> int:
    return build_main(__doc__.splitlines()[0], DEFAULT_CACHE, build, "node_modules", argv)


if __name__ == "__main__":
    sys.exit(main())
