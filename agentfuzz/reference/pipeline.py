"""One turn through the profile's pipeline: ids, template, scripted model, tool parser.

A request carrying a puppet script (``script``) skips the scripted model: the model writes the
script's text, then stops, or is stopped sooner by a stop string or the token budget
(``Knobs.written``), so the parser reads only what was written. Under a forced ``tool_choice``
the script is given up and the scripted model answers under the choice's constraint. A server
started with a tool-call parser (``readers``) reads every answer with it instead of the
template's own parser.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, replace
from typing import Any

from .behaviours import Behaviour, get_behaviour
from .chat_out import mint
from .intake import Intake, parse_chat
from .model import Constraint, generate
from .parsers import (
    SECTION_BEGIN,
    SECTION_END,
    Parsed,
    ParseFailure,
    parse_harmony,
    parse_kimi,
    tokens_in,
)
from .readers import read_output
from .renumber import renumber
from .templates import render

__all__ = ["Answer", "answer", "render_prompt"]


@dataclass
class Answer:
    """The rendered prompt, the model's raw text, the parse, and the RNG that minted it all."""

    prompt: str
    raw: str
    parsed: Parsed
    rng: random.Random


def _prompt(profile: Behaviour, intake: Intake) -> str:
    messages = intake.messages
    if profile.template == "kimi":
        messages = renumber(messages, profile.rewrite)
    tools, allowed = intake.tools, intake.choice.allowed
    if tools is not None and allowed is not None and not profile.ignore_allowed:
        # allowed_tools: the model is offered only those, the rest stay declared.
        tools = [t for t in tools if t.name in allowed]
    fault = profile.relation_fault
    if fault == "tools_unrendered":
        tools = None
    if fault == "system_dropped":
        messages = [m for m in messages if m.role != "system"]
    if fault == "results_cut":
        messages = [replace(m, content=m.content[:32]) if m.role == "tool" else m for m in messages]
    return render(profile.template, messages, tools, escape=fault != "special_read")


def render_prompt(
    profile: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> str:
    """Render chat-completions ``messages``/``tools`` exactly as the profile's server would."""
    intake = parse_chat({"messages": messages, "tools": tools})
    return _prompt(get_behaviour(profile), intake)


def _constraint(profile: Behaviour, intake: Intake) -> Constraint:
    if intake.choice.mode == "none":
        return Constraint("none")
    if intake.tools is None and not profile.leak_without_tools:
        # The fix for seed 004: with no tools declared, tool-call tokens are not allowed.
        return Constraint("none")
    return Constraint(intake.choice.mode, intake.choice.name)


def answer(
    profile: Behaviour,
    intake: Intake,
    *,
    seed: int,
    temperature: float,
    counter: int,
    reader: str | None = None,
) -> Answer:
    """Run the pipeline; raises ``ParseFailure`` when the profile's parser gives up.

    At temperature 0 the RNG is keyed by the server seed and the prompt, so re-sending a
    request (streamed or not) gives the same answer and the same ids; above 0 it is keyed by
    the seed and the request counter. ``reader``: the server's tool-call parser, if it was
    started with one (else the profile's, else the template's own).
    """
    prompt = _prompt(profile, intake)
    constraint = _constraint(profile, intake)
    if temperature > 0:
        key = f"{seed}:{counter}"
    else:
        digest = hashlib.sha256(f"{constraint}\x00{prompt}".encode("utf-8", "surrogatepass"))
        key = f"{seed}:{digest.hexdigest()}"
    rng = random.Random(key)
    cut_short = False
    if intake.script is not None and intake.choice.mode in ("required", "named"):
        # A forced choice is a grammar over the output (vLLM's structured outputs), which
        # forbids the script's markup: the puppet gives the script up and the model writes
        # what the grammar allows, as vLLM's processor does; and, as vLLM reads a forced
        # choice's output itself rather than by the tool parser, it is read in the model's
        # own format.
        intake, reader = replace(intake, script=None), None
    if intake.script is not None:
        raw, cut_short = intake.knobs.written(intake.script.text_for(prompt))
    else:
        raw = generate(profile.template, prompt, constraint, rng, temperature)
    if profile.stop_in_raw:
        raw = _cut_raw(raw, intake)
    parsed = _parse(profile, intake, raw, reader or profile.tool_parser, rng)
    if intake.script is not None:
        parsed.written = tokens_in(raw)
        # The planted ``cut_complete`` fault: a cut script reported as a whole answer.
        parsed.cut_short = cut_short and profile.puppet_fault != "cut_complete"
    if profile.cut_quoted_names:
        parsed.calls = [replace(c, name=c.name.split('"')[0]) for c in parsed.calls]
    if profile.relation_fault == "required_one_call" and intake.choice.mode == "required":
        parsed.calls = parsed.calls[:1]
    return Answer(prompt, raw, intake.knobs.apply(parsed), rng)


def _parse(
    profile: Behaviour, intake: Intake, raw: str, reader: str | None, rng: random.Random
) -> Parsed:
    """The raw output read by the parser that serves this request."""
    if intake.tools is None and profile.leak_without_tools:
        # No tools, so no tool parser runs: whatever the model wrote is content.
        return Parsed(content=raw)
    if intake.script is not None and (intake.tools is None or intake.choice.mode == "none"):
        # vLLM runs no tool parser without tools or under tool_choice "none": a script's
        # markup, which no constraint kept the puppet from writing, is content.
        return Parsed(content=raw)
    names = [t.name for t in intake.tools or []]
    if reader is not None:
        schemas = {t.name: t.parameters for t in intake.tools or []}
        # A planted puppet fault breaks scripted answers alone: the reference model's own
        # output stays as the faithful profile reads it, so other oracles stay quiet.
        fault = profile.puppet_fault if intake.script is not None else None
        if fault == "unreadable_swallowed" and not intake.stream:
            fault = None  # that fault is the stream's alone
        return read_output(reader, raw, schemas, fault, lambda: mint(rng, "chatcmpl-tool-"))
    if profile.template == "harmony":
        return parse_harmony(raw, names)
    return parse_kimi(raw, names, profile.grammar, profile.miss)


def _cut_raw(raw: str, intake: Intake) -> str:
    """The planted fault: a stop string matched in the raw output, tool-call markup included."""
    cut, stopped = intake.knobs.cut(raw)
    if stopped and SECTION_BEGIN in cut and SECTION_END not in cut:
        raise ParseFailure(cut[cut.find(SECTION_BEGIN) :])
    return cut
