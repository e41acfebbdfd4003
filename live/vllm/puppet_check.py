"""Check the puppet processor on real vLLM (CPU): a scripted call comes back as written, a request
without a script is left to the model, and a mimic script copies its header from the history.

    python live/vllm/puppet_check.py [--cache DIR] [--model DIR] [--python PY] [--skip-mimic]

Runs with the project's venv (it imports agentfuzz); the server runs with the cache's venv (or
--python) and the launcher and templates build.py installs. Starts the server twice: with the
Hermes parser (a scripted call, a request without a script, a script the grammar of a forced
tool_choice forbids, an unreadable script), then with the Kimi-K2 parser (a mimic script whose
header is the last call id in the history). Prints one line per check;
exit 0 when all pass, 1 when one fails, 3 when the server cannot be started.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _kit import ServerError, free_port, serving

from agentfuzz.cli.puppet import server_args, server_env
from agentfuzz.puppet.channel import HEADER, KEY, Mimic, Text, encode
from agentfuzz.puppet.formats import Call, Script, format_named

HERE = Path(__file__).resolve().parent
DEFAULT_CACHE = HERE.parent.parent / ".cache" / "live-vllm"
PUPPET_TEMPLATES = HERE / "puppet_templates"
MODEL = "smollm2"
# build.py's models, the default first (puppet_model.py).
WEIGHTS = ("puppet-tiny", "puppet-smollm2", "model")
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]


def template_for(parser: str) -> Path:
    """The chat template a puppet server of ``parser`` renders with: the puppet's own for that
    family in puppet_templates/ (Kimi-K2's, which renders history ids verbatim), else the
    parser's in templates/, else puppet_templates/plain.jinja (no format's markup: the processor
    writes every answer, so only the conversation needs rendering)."""
    for path in (PUPPET_TEMPLATES / f"{parser}.jinja", HERE / "templates" / f"{parser}.jinja"):
        if path.exists():
            return path
    return PUPPET_TEMPLATES / "plain.jinja"


def command(args: argparse.Namespace, port: int, parser: str) -> list[str]:
    cache = args.cache
    return [
        str(args.python or cache / "venv" / "bin" / "python"),
        str(HERE / "launch.py"),
        "serve",
        str(args.model or cache / args.weights),
        *("--host", "127.0.0.1", "--port", str(port), "--served-model-name", MODEL),
        *("--max-model-len", "2048", "--enforce-eager"),
        *("--chat-template", str(template_for(parser))),
        *server_args(parser),
    ]


def chat(base: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{base}/chat/completions",
        data=json.dumps({"model": MODEL, "max_tokens": 200, **body}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=300) as answer:
        found: dict[str, Any] = json.loads(answer.read())
        return found


def calls_of(answer: dict[str, Any]) -> list[tuple[str, Any, str]]:
    message = answer["choices"][0]["message"]
    return [
        (c["function"]["name"], json.loads(c["function"]["arguments"]), c["id"])
        for c in message.get("tool_calls") or []
    ]


def check(name: str, ok: bool, detail: Any) -> bool:
    print(f"{'PASS' if ok else 'FAIL'} {name}: {json.dumps(detail)[:400]}", flush=True)
    return ok


def hermes_checks(base: str) -> list[bool]:
    fmt = format_named("hermes")
    script = Script((Call("get_weather", {"city": 'Par"is \\ ünï'}),), text_before="Let me look.")
    truth = fmt.expected(script)
    scripted = chat(base, {"messages": ASK, "tools": [WEATHER], "vllm_xargs": encode(
        Text(fmt.write(script), tag="hermes-scripted"))})  # fmt: skip
    got = [(name, arguments) for name, arguments, _ in calls_of(scripted)]
    want = [(call.name, call.arguments) for call in truth.calls]
    choice = scripted["choices"][0]
    same = got == want and truth.same_content(choice["message"].get("content"))
    results = [check("scripted call", same, {"got": got, "content": choice["message"]["content"]})]
    results.append(
        check("finish", choice["finish_reason"] == "tool_calls", choice["finish_reason"])
    )
    free = chat(base, {"messages": ASK, "tools": [WEATHER], "max_tokens": 30, "temperature": 0})
    message = free["choices"][0]["message"]
    untouched = calls_of(free) != got or message.get("content") != choice["message"]["content"]
    results.append(check("no script, untouched", untouched, message))
    return results + guard_checks(base, fmt.write(script))


def guard_checks(base: str, written: str) -> list[bool]:
    """A script the grammar of a forced tool_choice forbids is given up, not forced, and the
    server goes on answering; an unreadable script is the client's error (400)."""
    forced = {"type": "function", "function": {"name": "get_weather"}}
    body = {"messages": ASK, "tools": [WEATHER], "tool_choice": forced, "max_tokens": 40}
    answer = chat(base, {**body, "vllm_xargs": encode(Text(written, tag="under-grammar"))})
    choice = answer["choices"][0]
    results = [check("grammar wins, answer comes", "finish_reason" in choice, choice)]
    try:
        chat(base, {"messages": ASK, "vllm_xargs": {KEY: "{not json"}})
        refused: Any = "answered 200"
    except urllib.error.HTTPError as exc:
        refused = exc.code
    results.append(check("unreadable script is 400", refused == 400, refused))
    again = chat(base, {"messages": ASK, "tools": [WEATHER], "vllm_xargs": encode(Text(written))})
    return [*results, check("still serving", bool(calls_of(again)), calls_of(again))]


def kimi_mimic_check(base: str) -> list[bool]:
    """The history's last call id is `functions.get_weather:7`; the mimic copies it."""
    fmt = format_named("kimi_k2")
    written = fmt.write(
        Script((Call("get_weather", {"city": "Lyon"}, id="functions.get_weather:0"),))
    )
    template = written.replace("functions.get_weather:0", HEADER)
    pattern = r"<\|tool_call_begin\|>(?P<header>.+?)<\|tool_call_argument_begin\|>"
    past = {"id": "functions.get_weather:7", "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}  # fmt: skip
    messages = [
        *ASK,
        {"role": "assistant", "content": "", "tool_calls": [past]},
        {"role": "tool", "tool_call_id": past["id"], "content": "sunny"},
        {"role": "user", "content": "And in Lyon?"},
    ]
    mimic = Mimic(template, pattern, default="functions.get_weather:0", tag="kimi-mimic")
    answer = chat(base, {"messages": messages, "tools": [WEATHER], "vllm_xargs": encode(mimic)})
    got = calls_of(answer)
    want = [("get_weather", {"city": "Lyon"}, "functions.get_weather:7")]
    return [check("mimic header copied", got == want, {"got": got})]


@contextlib.contextmanager
def puppet_server(args: argparse.Namespace, parser: str, log: Path) -> Iterator[str]:
    """vLLM started with ``parser`` and the puppet processor, logging to ``log``; yields its
    ``/v1`` URL and stops it after."""
    port = free_port()
    root = f"http://127.0.0.1:{port}"
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1"}
    for name, value in server_env(HERE.parent.parent).items():
        env[name] = os.pathsep.join(p for p in (value, env.get(name)) if p)
    print(f"starting vLLM with the {parser} parser and the puppet processor (log: {log})")
    server = command(args, port, parser)
    ready = f"{root}/health"
    with serving(
        "vLLM", server, log=log, cwd=args.logs, ready=ready, timeout=args.timeout, env=env
    ):
        yield f"{root}/v1"


def server_options(parser: argparse.ArgumentParser) -> None:
    """The options of the server a puppet script starts: build.py's cache and its parts."""
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="build.py's cache")
    parser.add_argument("--model", type=Path, help="a model dir (default: CACHE/WEIGHTS)")
    parser.add_argument(
        "--weights",
        choices=WEIGHTS,
        default=WEIGHTS[0],
        help="which of build.py's models: the tiny puppet model (fast, every answer scripted), "
        "SmolLM2 with the markers as tokens, or plain SmolLM2",
    )
    parser.add_argument("--python", type=Path, help="the server's python (default: CACHE/venv)")
    parser.add_argument("--logs", type=Path, help="where server logs go (default: CACHE)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to start a server")


def run(args: argparse.Namespace, parser: str, checks: Any) -> list[bool]:
    with puppet_server(args, parser, args.logs / f"puppet-{parser}.log") as base:
        results: list[bool] = checks(base)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    server_options(parser)
    parser.add_argument("--skip-mimic", action="store_true", help="only the Hermes checks")
    args = parser.parse_args(argv)
    args.logs = args.logs or args.cache
    args.logs.mkdir(parents=True, exist_ok=True)
    try:
        results = run(args, "hermes", hermes_checks)
        if not args.skip_mimic:
            results += run(args, "kimi_k2", kimi_mimic_check)
    except ServerError as exc:
        print(f"puppet_check.py: {exc}", file=sys.stderr)
        return 3
    print(f"{sum(results)}/{len(results)} checks passed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
