"""Build the live LiteLLM proxy target into a cache folder: a venv holding `litellm[proxy]`.

Stdlib only, so any python3.11 runs it. The step ends by writing a marker holding its spec; a step
whose marker is missing or stale is redone from scratch, so an interrupted build heals on the next
run. Nothing here touches the project's own .venv.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _kit import BuildError, build_main, is_done, mark_done, probe_index, run

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEFAULT_CACHE = ROOT / ".cache" / "live-litellm"

# 1.107.0 was a compromised release (pulled from PyPI). Newer releases pin companion distributions
# (`litellm-proxy`, `litellm-proxy-extras` 0.4.113, `litellm-enterprise` 0.1.79.post2) that the
# index reached from here does not have: 1.108.7 is the newest whose `proxy` extra resolves.
PROXY = ["litellm[proxy]==1.108.7"]


def build_venv(cache: Path, log: Path) -> None:
    """Create venv/ with the pinned LiteLLM proxy and check that its CLI imports."""
    venv, marker = cache / "venv", cache / "venv.done"
    spec = {"proxy": PROXY}
    if is_done(marker, spec):
        print("venv: up to date")
        return
    # The bare distribution is one small wheel: enough to prove the index answers.
    probe_index(cache, log, PROXY[0].replace("[proxy]", ""))
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


def main(argv: list[str] | None = None) -> int:
    return build_main(__doc__.splitlines()[0], DEFAULT_CACHE, build_venv, "venv", argv)


if __name__ == "__main__":
    sys.exit(main())
