"""Build the live Llama Stack target into a cache folder: a Python 3.12 venv holding llama-stack.

Stdlib only, so any python3.11 runs it; the venv itself needs a Python 3.12 (llama-stack 0.7.3
requires it), found on PATH or under pyenv. The step ends by writing a marker holding its spec; a
step whose marker is missing or stale is redone from scratch, so an interrupted build heals on the
next run. Nothing here touches the project's own .venv.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _kit import BuildError, build_main, is_done, mark_done, probe_index, run

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEFAULT_CACHE = ROOT / ".cache" / "live-llama-stack"

# mcp 2.x breaks the import of llama-stack's CLI; the `remote::vllm` provider talks to any
# OpenAI-compatible server through the openai client llama-stack already depends on.
SERVER = ["llama-stack==0.7.3", "mcp<2"]
# A small wheel any interpreter may download: enough to prove the index answers (llama-stack
# itself needs Python 3.12, which pip on this interpreter would refuse to download).
PROBE = "llama-stack-client"
WANTED_PYTHON = (3, 12)


def python_candidates(env: dict[str, str] | None = None) -> list[Path]:
    """Where a Python 3.12 may be, best first: PATH, then each pyenv version 3.12.x."""
    env = dict(os.environ) if env is None else env
    name = "python{}.{}".format(*WANTED_PYTHON)
    found: list[Path] = []
    on_path = shutil.which(name, path=env.get("PATH"))
    if on_path:
        found.append(Path(on_path))
    root = Path(env.get("PYENV_ROOT") or Path(env.get("HOME", "~")).expanduser() / ".pyenv")
    prefix = "{}.{}.".format(*WANTED_PYTHON)
    versions = root / "versions"
    if versions.is_dir():
        for version in sorted(versions.iterdir(), reverse=True):
            if version.name.startswith(prefix):
                found.append(version / "bin" / name)
    return found


def find_python(log: Path, env: dict[str, str] | None = None) -> str:
    """A Python 3.12 interpreter that runs; BuildError (one line) when there is none."""
    check = "import sys; print('%d.%d' % sys.version_info[:2])"
    wanted = "{}.{}".format(*WANTED_PYTHON)
    for candidate in python_candidates(env):
        if not candidate.is_file():
            continue
        try:
            if run([str(candidate), "-c", check], log, "python probe").strip() == wanted:
                return str(candidate)
        except BuildError:
            continue  # a pyenv shim for a version that is not installed, say
    raise BuildError(f"no Python {wanted} found (on PATH or under pyenv): llama-stack needs it")


def build_venv(cache: Path, log: Path) -> None:
    """Create venv/ on Python 3.12 with the pinned llama-stack and check that its CLI imports."""
    venv, marker = cache / "venv", cache / "venv.done"
    spec = {"server": SERVER, "python": "{}.{}".format(*WANTED_PYTHON)}
    if is_done(marker, spec):
        print("venv: up to date")
        return
    python = find_python(log)
    probe_index(cache, log, PROBE)
    marker.unlink(missing_ok=True)
    shutil.rmtree(venv, ignore_errors=True)
    started = time.monotonic()
    run([python, "-m", "venv", str(venv)], log, "creating the venv")
    venv_python = str(venv / "bin" / "python")
    print(f"venv: installing {' '.join(SERVER)} on {python} (a few minutes)", flush=True)
    run([venv_python, "-m", "pip", "install", *SERVER], log, "pip install llama-stack")
    check = "import llama_stack.cli.llama, importlib.metadata as m; print(m.version('llama-stack'))"
    version = run([venv_python, "-c", check], log, "importing the llama CLI").strip()
    wanted = SERVER[0].split("==")[1]
    if version != wanted:
        raise BuildError(f"venv: llama-stack is {version!r}, not {wanted}")
    mark_done(marker, spec)
    print(f"venv: done in {time.monotonic() - started:.0f} s")


def main(argv: list[str] | None = None) -> int:
    return build_main(__doc__.splitlines()[0], DEFAULT_CACHE, build_venv, "venv", argv)


if __name__ == "__main__":
    sys.exit(main())
