"""A real Codex CLI session through `agentfuzz proxy`: what Codex did, and what the proxy caught.

Builds Codex CLI into .cache/live-codex (build.py) unless it is there, starts the upstream (the
reference server with `--serve PROFILE`, or any server with `--upstream URL`), puts `agentfuzz
proxy` in front of it, and points Codex at the proxy with a provider of its own (`wire_api =
"responses"`, web search off). Codex then runs two asks in one session, `codex exec` and `codex
exec resume --last`: streamed Responses, its own shell tool run in a scratch folder, the result
fed back, a final answer, and a second ask carrying all of it as history.

Exit: 0 when the proxy's word matches `--expect` (found: a bundle was written; silent: none), 1
when it does not, 2 for a usage error, 3 when the npm registry cannot be reached to build Codex
(0 with one line under `--skip-offline`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import build
from _kit import BuildError, ServerError, free_port, serving

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
ASKS = ("Use the shell to list the files here.", "Now use the shell again to show them.")

CONFIG = """\
model = "{model}"
model_provider = "agentfuzz"
web_search = "disabled"
approval_policy = "never"

[model_providers.agentfuzz]
name = "agentfuzz proxy"
base_url = "{base_url}"
env_key = "AGENTFUZZ_CODEX_KEY"
wire_api = "responses"
"""


def _first_model(base_url: str) -> str:
    with urllib.request.urlopen(f"{base_url}/models", timeout=10) as answer:
        return str(json.load(answer)["data"][0]["id"])


def _codex(binary: Path, home: Path, work: Path, args: list[str], timeout: float) -> int:
    """One `codex exec` run, its output shown; the key is a throwaway the proxy passes on."""
    env = os.environ | {"CODEX_HOME": str(home), "AGENTFUZZ_CODEX_KEY": "sk-agentfuzz-codex"}
    command = [str(binary), "exec", "--skip-git-repo-check", "-s", "danger-full-access", *args]
    print(f"$ codex exec {' '.join(args)}", flush=True)
    try:
        done = subprocess.run(
            command,
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
            text=True,
            capture_output=True,
        )
    except subprocess.TimeoutExpired:
        print(f"codex: no answer within {timeout:.0f} s")
        return 124
    shown = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    for line in shown[-12:]:
        print(f"  | {line[:160]}")
    return done.returncode


def _what_codex_did(sessions: Path) -> str:
    """Requests Codex sent and the tools it ran, read from the proxy's recorded sessions."""
    requests, tools = 0, 0
    for path in sorted(sessions.glob("session-*/session.json")):
        turns = json.loads(path.read_text())["turns"]
        requests += len(turns)
        if turns:
            items = turns[-1]["request"].get("input")
            if isinstance(items, list):
                tools = max(tools, sum(1 for i in items if i.get("type") == "function_call_output"))
    count = len(list(sessions.glob("session-*")))
    return f"codex: {requests} requests in {count} session(s), {tools} tool result(s) sent back"


def run(args: argparse.Namespace) -> int:
    cache = args.cache.resolve()
    if not args.skip_build:
        cache.mkdir(parents=True, exist_ok=True)
        build.build(cache, cache / "build.log")
    binary = build.codex_binary(cache)
    out = args.out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    python = sys.executable
    upstream_port, proxy_port = free_port(), free_port()
    with contextlib.ExitStack() as stack:
        if args.upstream is None:
            command = [python, "-m", "agentfuzz", "serve", args.serve, "--port", str(upstream_port)]
            upstream = f"http://127.0.0.1:{upstream_port}/v1"
            stack.enter_context(
                serving(
                    "agentfuzz serve",
                    command,
                    log=out / "upstream.log",
                    cwd=out,
                    ready=f"{upstream}/models",
                    timeout=60,
                )
            )
        else:
            upstream = args.upstream.rstrip("/")
        model = args.model or _first_model(upstream)
        proxy_url = f"http://127.0.0.1:{proxy_port}/v1"
        command = [
            python,
            "-m",
            "agentfuzz",
            "proxy",
            "--upstream",
            upstream,
            "--port",
            str(proxy_port),
            "--out",
            str(out / "bundles"),
            "--record",
            str(out / "sessions"),
            "--profile",
            args.profile,
        ]
        # The bundles name this script's command as the one that found them.
        said = shlex.join(["python", "live/codex/session.py", *sys.argv[1:]])
        proxy = stack.enter_context(
            serving(
                "agentfuzz proxy",
                command,
                log=out / "proxy.log",
                cwd=out,
                ready=f"{proxy_url}/models",
                timeout=60,
                env=os.environ | {"AGENTFUZZ_COMMAND": said},
            )
        )
        home, work = out / "codex-home", out / "work"
        home.mkdir()
        work.mkdir()
        (home / "config.toml").write_text(CONFIG.format(model=model, base_url=proxy_url))
        (work / "notes.txt").write_text("a file for Codex to find\n")
        codes = [_codex(binary, home, work, [ASKS[0]], args.timeout)]
        codes.append(_codex(binary, home, work, ["resume", "--last", ASKS[1]], args.timeout))
        # Leaving the block stops the proxy (SIGTERM: it judges what is queued, then exits).
    print(_what_codex_did(out / "sessions"))
    print(f"codex exits: {codes}")
    said = (out / "proxy.log").read_text(errors="replace").splitlines()
    caught = [line for line in said if line.startswith("agentfuzz: session ")]
    for line in said:
        if line.startswith(("agentfuzz: session ", "agentfuzz proxy: ")):
            print(line)
    bundles = sorted(p.parent.name for p in (out / "bundles").glob("*/repro.json"))
    print(f"proxy exit {proxy.returncode}; bundles: {bundles or 'none'} (in {out / 'bundles'})")
    if args.expect == "found":
        return 0 if bundles else 1
    if args.expect == "silent":
        return 0 if not bundles and not caught else 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", default="vllm-kimi-k2", help="reference server profile")
    parser.add_argument("--upstream", help="a server's base URL (with /v1) instead of --serve")
    parser.add_argument("--model", help="model name; default: the upstream's first")
    parser.add_argument("--profile", default="default", help="the proxy's fuzz profile")
    parser.add_argument("--expect", choices=("found", "silent", "any"), default="any")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per codex run")
    parser.add_argument("--cache", type=Path, default=build.DEFAULT_CACHE)
    parser.add_argument("--out", type=Path, default=ROOT / ".cache" / "live-codex-out")
    parser.add_argument("--skip-build", action="store_true", help="use the cache as it is")
    parser.add_argument(
        "--skip-offline", action="store_true", help="exit 0 with one line when npm is unreachable"
    )
    args = parser.parse_args(argv)
    # SIGTERM unwinds like Ctrl-C: every server this started is stopped on the way out.
    signal.signal(signal.SIGTERM, lambda signum, _: sys.exit(128 + signum))
    started = time.monotonic()
    try:
        code = run(args)
    except BuildError as exc:
        if exc.code == 3 and args.skip_offline:
            print(f"codex session skipped: {exc}")
            return 0
        print(f"session.py: {exc}", file=sys.stderr)
        return exc.code
    except ServerError as exc:
        print(f"session.py: {exc}", file=sys.stderr)
        return 1
    print(f"done in {time.monotonic() - started:.0f} s")
    return code


if __name__ == "__main__":
    sys.exit(main())
