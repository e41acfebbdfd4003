"""Replay a puppet bundle's written text through vLLM 0.32.0's own tool-parser objects, outside any
server: once non-streamed and once streamed token by token, as the chat server calls them.

    .cache/live-vllm/venv/bin/python live/vllm/parser_replay.py BUNDLE [--cache DIR]
        [--parser NAME] [--coalesce N] [--max-tokens N] [--verbose] [--json OUT]

BUNDLE is a finding's folder holding repro.json, or the repro.json itself; its request must carry a
puppet script with written text (``vllm_xargs.agentfuzz_puppet``). The text is tokenized with the
cache's puppet-tiny tokenizer, eos added, and fed through vLLM's incremental detokenizer; the
non-streamed path calls ``Parser.parse`` on the whole text, the streamed one ``Parser.parse_delta``
once per step (one token, or N with --coalesce N) and adds the wire deltas up as a client does.
It prints both answers and whether they agree, so a puppet finding can be pinned on the parser
function at fault and reproduced without a server. --json writes both answers to a file.

Run it with the cache venv's python (live/vllm/build.py makes it); it does not need agentfuzz.
Exit 0 when the replay ran (whether or not the two answers agree), 2 on bad input.

Limits: chat paths only (a Responses bundle is replayed as chat, its tools rewrapped); no
reasoning parser; the Harmony path is never chosen; mimic scripts (text made from the prompt)
are not replayed; the detokenizer is not primed with a prompt.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

HERE = Path(__file__).resolve().parent
DEFAULT_CACHE = HERE.parent.parent / ".cache" / "live-vllm"
TOKENIZER = "puppet-tiny"
BUDGET_KEYS = ("max_completion_tokens", "max_tokens", "max_output_tokens")


class BadInput(Exception):
    """Input this script cannot replay; its message is the one line printed."""


def load_bundle(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The bundle's request body and its puppet script, read with json alone."""
    repro = path / "repro.json" if path.is_dir() else path
    if not repro.is_file():
        raise BadInput(f"{path}: no repro.json there")
    try:
        body = json.loads(repro.read_text())["request"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BadInput(f"{repro}: not a bundle's repro.json ({exc!r})") from exc
    xargs = body.get("vllm_xargs") if isinstance(body, dict) else None
    raw = xargs.get("agentfuzz_puppet") if isinstance(xargs, dict) else None
    if not raw:
        raise BadInput(f"{repro}: the request carries no puppet script")
    try:
        puppet = json.loads(raw)
    except ValueError as exc:
        raise BadInput(f"{repro}: the puppet script is not JSON ({exc})") from exc
    if not isinstance(puppet, dict) or not isinstance(puppet.get("text"), str):
        raise BadInput(f"{repro}: the puppet script has no written text (a mimic is not replayed)")
    if not isinstance(puppet.get("format"), str):
        raise BadInput(f"{repro}: the puppet script names no format")
    return body, puppet


class _Arguments(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise BadInput(message)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = _Arguments(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("bundle", type=Path, help="a bundle folder (with repro.json) or a repro.json")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="build.py's cache folder")
    ap.add_argument("--parser", help="the tool parser (default: the puppet script's format)")
    ap.add_argument("--coalesce", type=int, default=1, help="tokens per streamed step (1)")
    ap.add_argument("--max-tokens", type=int, help="the token budget (default: the request's)")
    ap.add_argument("--verbose", "-v", action="store_true", help="print every streamed delta")
    ap.add_argument("--json", type=Path, help="also write both answers to this file")
    args = ap.parse_args(argv)
    if args.coalesce < 1:
        raise BadInput("--coalesce must be 1 or more")
    if args.max_tokens is not None and args.max_tokens < 1:
        raise BadInput("--max-tokens must be 1 or more")
    return args


def _budget(body: dict[str, Any], override: int | None) -> int | None:
    if override is not None:
        return override
    return next((body[key] for key in BUDGET_KEYS if body.get(key) is not None), None)


def _show(label: str, result: Any, verbose: bool) -> None:
    print(f"== {label} ==")
    if result.error:
        print("  raised (the server answers with an error):")
        print("  " + result.error.replace("\n", "\n  "))
    print(f"  content: {result.content!r}")
    print(f"  finish_reason: {result.finish_reason}")
    for index, call in enumerate(result.calls):
        print(f"  call {index}: name={call['name']!r} arguments={call['arguments']!r}")
    if not result.calls:
        print("  (no tool calls)")
    for line in result.logs:
        print("  " + line.replace("\n", "\n  "))
    if verbose and result.deltas:
        print("  engine delta text -> wire delta:")
        for line in result.deltas:
            print("    " + line)


def replay(args: argparse.Namespace, body: dict[str, Any], puppet: dict[str, Any]) -> int:
    """Builds vLLM's objects, runs both paths and prints them."""
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    try:
        import _replay_stream as vr
        from vllm.tokenizers import get_tokenizer
    except ImportError as exc:
        venv = args.cache / "venv" / "bin" / "python"
        raise BadInput(f"vLLM does not import here ({exc}); run this with {venv}") from exc
    capture = vr.LogCapture()
    logging.getLogger("vllm").addHandler(capture)
    tokenizer = get_tokenizer(str(args.cache / TOKENIZER))
    name = args.parser or puppet["format"]
    try:
        cls = vr.parser_class(name, tokenizer)
    except ValueError as exc:
        raise BadInput(str(exc)) from exc
    tool_parser = cls.tool_parser_cls
    api = "chat" if "messages" in body or "input" not in body else "responses (replayed as chat)"
    print(f"bundle: {args.bundle}  api={api}")
    print(f"parser: {name} -> {tool_parser.__module__}.{tool_parser.__name__}")
    print(f"written text: {puppet['text']!r}")
    budget = _budget(body, args.max_tokens)
    answers = {}
    for stream, label in ((False, "non-streamed"), (True, "streamed")):
        request = vr.adjusted(cls, tokenizer, vr.build_request(body, stream))
        coalesce = args.coalesce if stream else 1
        out = vr.engine_output(tokenizer, request, puppet["text"], body, coalesce, budget)
        run = vr.replay_stream if stream else vr.replay_nonstream
        answers[label] = run(cls, tokenizer, request, out, capture)
        _show(label, answers[label], args.verbose)
    plain, streamed = answers["non-streamed"], answers["streamed"]
    agree = (plain.content or "") == (streamed.content or "") and plain.calls == streamed.calls
    print("== agree ==" if agree else "== streamed and non-streamed DIFFER ==")
    if args.json:
        summary = {"parser": name, "nonstream": plain.summary(), "stream": streamed.summary()}
        args.json.write_text(json.dumps({**summary, "agree": agree}, ensure_ascii=False, indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
        body, puppet = load_bundle(args.bundle)
        if not (args.cache / TOKENIZER).is_dir():
            raise BadInput(f"{args.cache / TOKENIZER}: missing (run live/vllm/build.py)")
        return replay(args, body, puppet)
    except BadInput as exc:
        print(f"parser_replay: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
