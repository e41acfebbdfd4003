"""Build the live llama.cpp (CPU) target if needed, start it, run one agentfuzz campaign, stop it.

`python live/llamacpp/campaign.py [--out DIR] [--max-time S] [--workers N] ...` exits with
agentfuzz's own code (0 nothing found, 1 findings; findings are what this is for, not a failure)
unless `--findings-ok` turns 1 into 0; any other code means agentfuzz or the target broke. With
`--skip-offline`, a machine that cannot reach the package index skips (exit 0) with one line.
Only chat completions are fuzzed: llama-cpp-python's server has no `/v1/responses` (404).
Run it with the interpreter agentfuzz is installed in; the server runs on the cache's own venv.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from serve import DEFAULT_CACHE, MODEL_NAME, ServerError, running  # noqa: E402

EXIT_OFFLINE = 3  # build.py: cannot reach the package index


def _build(cache: Path) -> int:
    return subprocess.run(
        [sys.executable, str(HERE / "build.py"), "--cache", str(cache)]
    ).returncode


def _fuzz(base_url: str, args: argparse.Namespace) -> int:
    argv = [sys.executable, "-m", "agentfuzz", "fuzz", "--base-url", base_url]
    argv += ["--model", MODEL_NAME, "--api", "chat", "--profile", args.profile]
    argv += ["--mode", args.mode, "--max-examples", str(args.max_examples)]
    argv += ["--max-time", str(args.max_time), "--workers", str(args.workers)]
    argv += ["--seed", str(args.seed), "--out", str(args.out), "--timeout", "120", "--quiet"]
    print("live-llamacpp: " + " ".join(argv[1:]), flush=True)
    return subprocess.run(argv).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--out", type=Path, default=Path("agentfuzz-out/live-llamacpp"))
    parser.add_argument("--profile", default="llamacpp")
    parser.add_argument("--mode", default="both", choices=("synthetic", "session", "both"))
    parser.add_argument("--max-examples", type=int, default=40, help="per stream mode")
    parser.add_argument("--max-time", type=float, default=300.0, help="seconds of fuzzing")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-offline", action="store_true")
    parser.add_argument("--findings-ok", action="store_true", help="exit 0 on findings too")
    args = parser.parse_args(argv)
    cache = args.cache.resolve()
    built = _build(cache)
    if built == EXIT_OFFLINE and args.skip_offline:
        print("live-llamacpp: skipped: cannot reach the package index to build the target")
        return 0
    if built != 0:
        return built
    started = time.monotonic()
    try:
        with running(cache) as base_url:
            took = time.monotonic() - started
            print(f"live-llamacpp: {base_url} answering in {took:.0f} s", flush=True)
            code = _fuzz(base_url, args)
    except ServerError as exc:
        print(f"live-llamacpp: {exc}", file=sys.stderr)
        return 1
    summary = args.out / "summary.json"
    if summary.is_file():
        data = json.loads(summary.read_text())
        examples = sum(data["examples"].values())
        print(f"live-llamacpp: {len(data['findings'])} finding(s), {examples} examples, "
              f"{data['requests']} requests in {data['elapsed_s']:.0f} s")  # fmt: skip
    return 0 if code == 1 and args.findings_ok else code


if __name__ == "__main__":
    sys.exit(main())
