"""The ``puppet_truth`` oracle: a scripted answer held to what the model was made to write.

With ``--puppet FORMAT`` each request carries a script (``puppet.scripted``): the text the
model writes, token by token, and the calls and prose it was written from. A faithful server's
answer is then known exactly (``Format.expected``): those calls, in order, each with its name,
its arguments equal as JSON and, where the format writes ids, that id; and the prose outside
the markup as the text (compared stripped: parsers trim the newlines around markup
differently). Anything else is the server's doing, since the model wrote nothing else.

Judged only where the truth is settled, so a finding is never the model's doing nor a choice
the spec leaves open:
- a complete 2xx answer: not a refusal, an error, or an answer cut by the token limit;
- the request declared its tools and left ``tool_choice`` to the model (none, ``auto``): with
  ``none`` or no tools, what a server does with markup the model wrote is ``leaked_markup``'s
  question, and under a forced choice the server's grammar may take over from the script
  (the processor gives the script up and only its log says so). A server may constrain an
  ``auto`` answer by a grammar too (vLLM's GLM-4.7 parser does): the answer cannot tell, so
  a puppet campaign counts the scripts the log says were given up (``live/vllm``);
- no stop strings, no token budget: each may end the answer;
- no field that takes the writing from the script (a grammar, a mask, ``n``) or tells the
  server to read it by a rule of its own (the chat template's kwargs, a reasoning effort,
  ``parallel_tool_calls: false`` over several calls): ``puppet.surface`` names them. Every
  other field of the surface is judged (sampling, log-probabilities, usage, metadata...);
- the script is one the format can write (``Format.unwritable``) and the text sent is its own
  writing (a hand-edited text has no known truth), and holds no near miss of the format's
  markup (``Format.doubt``: Kimi's call header without ``:N``, seed 000's ``call_<hex>``, seed
  001's sanitised ``functions_NAME_N``), which one parser drops, another reads, a third leaves
  as text;
- every call is to a tool the request declared: what a parser does with a call to any other
  (drop it, as a ``declared_only`` format's does, return it, or leave it as text) neither the
  spec nor the format settles;
- the script is a text, not a session turn's mimic (``channel.Mimic``: the model copies its
  call header from the prompt, so what it wrote, and the truth, depend on how the server
  rendered the history). Every other oracle judges a mimic turn: a call dropped for the header
  it copied is ``empty_turn``'s (seed 000).

A cut script (a token budget, stop strings) is ``puppet_cut``'s to judge.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from agentfuzz.model.history import Case
from agentfuzz.model.observation import Observation, ObservedCall, Violation
from agentfuzz.oracles._common import budgeted, declared_tools, is_answer, is_truncated
from agentfuzz.oracles._registry import clip, register
from agentfuzz.puppet.formats import Call, Format, Script, Truth
from agentfuzz.puppet.scripted import carried
from agentfuzz.puppet.surface import sways_reading, takes_writing

__all__ = ["differences", "puppet_truth", "returned", "scripted", "settled_request"]


def scripted(case: Case, obs: Observation) -> tuple[Format, str, Script, Truth] | None:
    """The format, the text written, the script and its truth, for a 2xx answer to a request
    carrying a script of agentfuzz's that is the format's own writing; None otherwise."""
    found = carried(case.options.fields)
    status = obs.exchange.status
    if found is None or not is_answer(obs) or status is None or not 200 <= status < 300:
        return None
    fmt, script, written = found
    if fmt.unwritable(script) is not None or fmt.write(script) != written:
        return None  # the text sent is not the script's own writing: its truth is not known
    if fmt.doubt(script) is not None:
        return None  # near-miss markup: parsers read it differently, none of them wrongly
    return fmt, written, script, fmt.expected(script)


def settled_request(case: Case, fmt: Format, truth: Truth) -> bool:
    """Whether the request lets the script's truth stand, cuts aside: tools declared and
    ``tool_choice`` left to the model, no field that takes the writing from the script or
    sways how it is read (``puppet.surface``), and every call to a declared tool."""
    opts = case.options
    declared = {t.flat_name for t in declared_tools(case)}
    if not declared or opts.tool_choice not in (None, "auto"):
        return False
    if takes_writing(opts.fields) or sways_reading(opts.fields, len(truth.calls)):
        return False
    return all(c.name in declared for c in truth.calls)


def _settled(case: Case, fmt: Format, truth: Truth) -> bool:
    """``settled_request``, and no token budget or stop strings, which may end the answer."""
    if budgeted(case) or "stop" in case.options.fields:
        return False
    return settled_request(case, fmt, truth)


@register(
    "puppet_truth",
    expected="The answer holds exactly the calls and prose the puppet model was made to write.",
    look_for="the script the request carries (vllm_xargs) beside the calls and text returned",
    rank=35,
)
def puppet_truth(case: Case, obs: Observation) -> Iterator[Violation]:
    """The server returned other calls or other text than the script the model wrote."""
    found = scripted(case, obs)
    if found is None:
        return
    fmt, written, _, truth = found
    if not _settled(case, fmt, truth) or is_truncated(obs):
        return
    where = f"puppet_truth:{fmt.name}"
    wrote = f"the model wrote {json.dumps(written, ensure_ascii=False)}"
    for kind, message in differences(fmt, truth, obs):
        yield Violation(
            oracle="puppet_truth",
            message=message,
            evidence=clip(f"{wrote}; the server returned {returned(obs)}"),
            signature=f"{where}:{kind}",
        )
        return  # the first difference names the fault; the rest follow from it


def differences(fmt: Format, truth: Truth, obs: Observation) -> Iterator[tuple[str, str]]:
    """Each way the answer differs from the truth, as (kind, what), calls first."""
    got, want = obs.tool_calls, truth.calls
    if len(got) != len(want):
        yield "calls:count", f"{len(got)} call(s) returned for the {len(want)} written"
        return
    for index, (call, expected) in enumerate(zip(got, want, strict=True)):
        yield from _call_differences(fmt, index, call, expected)
    if not truth.same_content(obs.text):
        shown = json.dumps(truth.content or "", ensure_ascii=False)
        yield "content", f"the text returned is not the prose written ({shown})"


def _call_differences(
    fmt: Format, index: int, call: ObservedCall, expected: Call
) -> Iterator[tuple[str, str]]:
    if call.flat_name != expected.name:
        yield "calls:name", f"call {index} named {call.flat_name!r}, written {expected.name!r}"
    elif _json(call.arguments) != expected.arguments:
        yield "calls:arguments", f"call {index}'s arguments are not those written"
    elif fmt.carries_ids and expected.id is not None and _call_id(call) != expected.id:
        got = _call_id(call)
        yield "calls:id", f"call {index}'s id is {got!r}, written {expected.id!r}"


def _call_id(call: ObservedCall) -> str | None:
    """The call's id as a client sends it back: Responses' ``call_id``, chat's ``id``."""
    return call.call_id if call.call_id is not None else call.id


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def returned(obs: Observation) -> str:
    """The answer's text and calls, as evidence shows them."""
    calls = [{"name": c.flat_name, "arguments": c.arguments, "id": c.id} for c in obs.tool_calls]
    return json.dumps({"text": obs.text, "calls": calls}, ensure_ascii=False)
