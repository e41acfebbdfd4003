"""What every ``agentfuzz`` command shares: the exit codes, the one-line failure, the checks of
the options they have in common, the embedded reference server, and SIGTERM taken as Ctrl-C.

Exit codes are a contract: 0 nothing found · 1 failures found (repros written) · 2 usage, config or
input error · 3 target unreachable. Every error is one line on stderr, never a traceback.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, NoReturn
from urllib.parse import urlsplit

import click

from agentfuzz.cli._printable import printable
from agentfuzz.cli._suggest import closest
from agentfuzz.errors import (
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    ModelListError,
    NotAnApi,
    TargetUnreachable,
)
from agentfuzz.judge.judge import oracle_names as known_oracles
from agentfuzz.model.accepted import base_url_problem
from agentfuzz.wire.target import first_model, listed_models, puppet_problem, wait_for_server

__all__ = [
    "DEFAULT_SERVE_PROFILE",
    "Exit",
    "checked_headers",
    "checked_key",
    "checked_url",
    "command_line",
    "fail",
    "first_model_of",
    "meant",
    "not_started",
    "oracle_names",
    "puppet_served",
    "reference_server",
    "serve_profile",
    "stop_signals",
    "trials_of",
    "url_hint",
    "waited_for",
    "warn_unlisted",
    "writable_out",
    "write_pytest_ini",
]


DEFAULT_SERVE_PROFILE = "vllm-kimi-k2"
# The embedded server of a --puppet run given no --serve: the faithful one for scripted output.
PUPPET_SERVE_PROFILE = "puppet"


def serve_profile(serve: str | None, puppet: str | None) -> str:
    """The reference server profile a run starts: ``--serve``'s, else the default one."""
    if serve is not None:
        return serve
    return DEFAULT_SERVE_PROFILE if puppet is None else PUPPET_SERVE_PROFILE


class Exit(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


# Flags whose value is a secret: left out of a recorded command (each falls back to its
# environment variable, so the command still runs as it did).
_SECRET_FLAGS = ("--api-key", "--header", "-H")
_URL_CREDENTIALS = re.compile(r"//[^/@\s]*@")


def command_line() -> str:
    """The running command as a shell line, without the API key or a URL's credentials; or,
    when a script ran agentfuzz for its user (``live/*/campaign.py``), the script's own command
    line, which it passes in ``$AGENTFUZZ_COMMAND``."""
    wrapper = os.environ.get("AGENTFUZZ_COMMAND")
    if wrapper:
        return wrapper
    root = click.get_current_context().find_root()
    argv = root.obj.get("argv", []) if isinstance(root.obj, dict) else []
    words: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
            continue
        flag = word.split("=", 1)[0]
        if flag in _SECRET_FLAGS:
            skip = "=" not in word
            continue
        if word.startswith("-H"):  # ``-H'Name: value'``, the value glued to the flag
            continue
        words.append(_URL_CREDENTIALS.sub("//", word))
    return shlex.join(["agentfuzz", *words])


def config_used() -> dict[str, Any] | None:
    """The options the config file gave the running command (``_config.config_in_force``)."""
    root = click.get_current_context().find_root()
    found = root.obj.get("config") if isinstance(root.obj, dict) else None
    return found if isinstance(found, dict) else None


def fail(code: int, message: str) -> NoReturn:
    raise Exit(code, message)


def oracle_names(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = sorted(set(names) - set(known_oracles()))
    if unknown:
        known = ", ".join(known_oracles())
        fail(EXIT_USAGE, f"unknown oracle {', '.join(unknown)} (known: {known})")
    return names


def checked_url(value: str | None, flag: str = "--base-url") -> str | None:
    """``value`` if it is an http(s) URL with a host and a valid port; else exit 2."""
    problem = None if value is None else base_url_problem(value)
    if problem:
        fail(EXIT_USAGE, f"{flag} {value!r}: {problem}")
    return value


def checked_key(value: str | None) -> str | None:
    # A header value must be printable ASCII; anything else fails on every request instead.
    if value and not all("!" <= c <= "~" for c in value):
        fail(EXIT_USAGE, "--api-key: only printable ASCII without spaces can be sent")
    return value


_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def checked_headers(values: tuple[str, ...]) -> dict[str, str]:
    """``--header 'Name: value'`` as a dict; exit 2 for one that cannot be sent as it is."""
    headers: dict[str, str] = {}
    for given in values:
        name, colon, value = given.partition(":")
        name, value = name.strip(), value.strip()
        if not colon or not _HEADER_NAME.fullmatch(name):
            # Nothing of it in the message: a value given without its name may be the secret.
            fail(EXIT_USAGE, "--header: expected 'Name: value' (a header name, a colon, a value)")
        if not all(" " <= c <= "~" for c in value):
            fail(EXIT_USAGE, f"--header {name}: the value must be printable ASCII")
        headers[name] = value
    return headers


def waited_for(
    url: str, seconds: float | None, api_key: str | None, headers: dict[str, str]
) -> None:
    """``--wait-for-server``: one line that it waits, then until ``GET {url}/models`` answers
    200; exit 3 with one line when ``seconds`` pass first."""
    if seconds is None:
        return
    models = f"{url.rstrip('/')}/models"
    click.echo(f"agentfuzz: waiting up to {seconds:g}s for {models} to answer 200", err=True)
    if not wait_for_server(url, seconds, api_key, headers):
        fail(EXIT_UNREACHABLE, f"{models} did not answer 200 within {seconds:g}s")


def trials_of(value: str) -> int | Literal["auto"]:
    if value == "auto":
        return "auto"
    if not value.isascii() or not value.isdigit() or int(value) < 1:
        fail(EXIT_USAGE, f"--trials {value}: expected a positive integer")
    return int(value)


# An output folder's pytest.ini: ``pytest OUT`` makes OUT the rootdir, so this applies to it
# alone, never to a project that holds OUT and collects it as its own.
_PYTEST_INI = """\
# Written by agentfuzz: `pytest <this folder>` runs every repro bundle in it, offline or with
# --agentfuzz-base-url. Each bundle has its own test_repro.py; importlib mode lets those
# same-named files import side by side (with the agentfuzz plugin loaded, each bundle is
# collected once, from its repro.json), even with plugin autoloading off.
[pytest]
addopts = --import-mode=importlib
"""


def write_pytest_ini(out: Path) -> None:
    """Make ``pytest OUT`` collect a folder of several bundles: without it, their same-named
    ``test_repro.py`` files clash ("import file mismatch") wherever the plugin does not leave
    them out (``-p no:agentfuzz``, ``PYTEST_DISABLE_PLUGIN_AUTOLOAD``, the files named on the
    command line). A ``pytest.ini`` already there is the user's and stays."""
    ini = out / "pytest.ini"
    if not ini.exists():
        # On a full disk the run's own line says so; this file is only a convenience.
        with contextlib.suppress(OSError):
            ini.write_text(_PYTEST_INI, encoding="utf-8")


def writable_out(out: Path, flag: str = "--out") -> Path:
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".agentfuzz-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        fail(EXIT_USAGE, f"{flag} {out}: not writable ({exc.strerror or exc})")
    return out


def first_model_of(
    base_url: str, api_key: str | None, timeout: float, headers: dict[str, str] | None = None
) -> str:
    try:
        return first_model(base_url, api_key, timeout, headers)
    except ModelListError as exc:
        advice = "check --base-url and --api-key" if isinstance(exc, NotAnApi) else "pass --model"
        fail(EXIT_USAGE, f"{exc}; {url_hint(base_url) or advice}")


def puppet_served(
    base_url: str, model: str, api_key: str | None, timeout: float, headers: dict[str, str]
) -> None:
    """``--puppet``: exit 2 unless the server writes what a script says (``puppet_problem``)."""
    problem = puppet_problem(base_url, model, api_key, timeout, headers)
    if problem is not None:
        fail(EXIT_USAGE, problem)


# Seconds the check of --model against GET /models may take: a hint, not worth a long wait.
_MODELS_CHECK_S = 5.0


def warn_unlisted(
    base_url: str, model: str, api_key: str | None, timeout: float, headers: dict[str, str]
) -> None:
    """One line on stderr when ``GET /models`` answers a list without ``model`` (a typo, or
    the wrong server): the run goes on, since a proxy may route names it does not list. A
    server that lists nothing usable, or does not answer, gets no line here."""
    try:
        listed = listed_models(base_url, api_key, min(timeout, _MODELS_CHECK_S), headers)
    except (ModelListError, TargetUnreachable):
        return
    if not listed or model in listed:
        return
    shown = ", ".join(listed[:5]) + (f" and {len(listed) - 5} more" if len(listed) > 5 else "")
    models = f"{base_url.rstrip('/')}/models"
    line = f"warning: --model {model} is not among the models {models} lists ({shown}); going on"
    click.echo(f"agentfuzz: {printable(line)}", err=True)


# An API version in a URL path: /v1, /v2beta, /api/v3/.
_VERSIONED = re.compile(r"/v\d+[a-z]*\d*(?:/|$)")


def url_hint(base_url: str) -> str | None:
    """What to try when a target serves nothing at ``base_url``, if the URL itself says it:
    a path with no API version (``http://host:8000``) most likely lacks the ``/v1`` under which
    OpenAI-compatible servers serve. None when the path has one."""
    if _VERSIONED.search(urlsplit(base_url).path):
        return None
    return f"the base URL probably lacks /v1: try {base_url.rstrip('/')}/v1"


@contextlib.contextmanager
def reference_server(
    base_url: str | None,
    serve: str | None,
    recorded: str | None = None,
    tool_parser: str | None = None,
) -> Iterator[str]:
    """The URL to fuzz: the given one, the recorded one of a replay-only campaign, or the
    embedded reference server started for this run (reading the model's output with
    ``tool_parser``, a format of the catalog, where given: ``--puppet``)."""
    if base_url or recorded:
        yield base_url or str(recorded)
        return
    try:
        from agentfuzz.reference import serve_in_thread
    except ImportError:  # pragma: no cover - the reference server ships with the package
        fail(EXIT_USAGE, "no --base-url given and the reference server is not available")
    profile = serve_profile(serve, tool_parser)
    try:
        server = serve_in_thread(profile, tool_parser=tool_parser)
        url = server.__enter__()
    except (KeyError, ValueError) as exc:
        fail(EXIT_USAGE, f"--serve {profile}: {not_started(profile, exc)}")
    except (OSError, RuntimeError) as exc:
        fail(EXIT_USAGE, f"--serve {profile}: cannot start the reference server: {exc}")
    try:
        yield url
    finally:
        server.__exit__(None, None, None)


def meant(profile: str) -> str:
    """``; did you mean vllm-kimi-k2?`` for a reference profile that is none; else nothing."""
    from agentfuzz.reference import BEHAVIOURS

    near = None if profile in BEHAVIOURS else closest(profile, BEHAVIOURS)
    return f"; did you mean {near}?" if near else ""


def not_started(profile: str, exc: Exception) -> str:
    """Why the reference server would not start with ``profile``, in one line: for a name that
    is no profile, the one meant before the list of them."""
    from agentfuzz.reference import BEHAVIOURS

    if profile in BEHAVIOURS:
        return str(exc.args[0] if exc.args else exc)
    return f"unknown reference profile{meant(profile)} (known: {', '.join(BEHAVIOURS)})"


@contextlib.contextmanager
def stop_signals() -> Iterator[Callable[[], bool]]:
    """Ctrl-C (SIGINT) and SIGTERM (what CI timeouts and process managers send) stop the run:
    it ends before its next request and writes its summary. The handlers before come back after.

    Yields whether one has come: the handler's ``KeyboardInterrupt`` is lost when the signal
    lands while Python runs a finalizer or a gc callback (it prints "Exception ignored in …"
    and goes on), so the run also asks this before each request, and that lost interrupt
    prints no traceback.
    """
    came: list[int] = []

    def interrupt(signum: int, frame: object) -> None:
        came.append(signum)
        raise KeyboardInterrupt

    try:
        before = {s: signal.signal(s, interrupt) for s in (signal.SIGTERM, signal.SIGINT)}
    except ValueError:  # not the main thread (an embedding program): leave its handlers be
        yield lambda: False
        return
    hook = sys.unraisablehook

    def quiet(unraisable: Any) -> None:
        # The interrupt a finalizer swallowed is handled through ``came``: no traceback for it.
        if not (came and issubclass(unraisable.exc_type, KeyboardInterrupt)):
            hook(unraisable)

    sys.unraisablehook = quiet
    try:
        yield lambda: bool(came)
    finally:
        sys.unraisablehook = hook
        for signum, handler in before.items():
            signal.signal(signum, handler)
