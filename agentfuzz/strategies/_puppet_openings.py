"""A ``--puppet`` run's openings: the plainest script of each trap a format's parser meets.

As the profile's cases open with each skeleton's plainest case (``strategies._openings``), a
scripted mode opens with one script per thing a tool parser must get right, each alone and
plain: one call; its argument holding each of the format's own markers and special tokens (the
parser must not end a call at a marker inside a value: the fault vLLM's Hermes parser showed
on 2026-12-06); quotes and backslashes; unicode; a string of digits; a value of each JSON kind;
prose before, between and after the calls; two calls; the last closing marker left out; a
name holding quotes; unicode spelt with ``\\u`` escapes. Where the format cannot write one
(``unwritable``) it is left out. At random each would come once in many draws, and a 50-example
run makes few.

These are written here, not drawn, so they carry no choices for the example database: what one
finds is found again by the next run's openings.
"""

from __future__ import annotations

from agentfuzz.model.history import Api, Case
from agentfuzz.puppet.formats import Call, Format, Json, Script
from agentfuzz.strategies._puppet import NAMES, scripted_case

__all__ = ["puppet_openings"]

_ARGUMENTS: tuple[dict[str, Json], ...] = (
    {"city": 'say "hi" \\ back\\slash'},
    {"city": "Zürich 東京 🌧 e\u0301"},
    {"zip": "02139"},  # a string of digits: not a number, however it looks
    {"days": 3, "ok": True, "none": None, "ratio": -2.5e-7},
    {"plan": {"deep": [1, {"a": "b"}], "empty": {}}},
)


def _scripts(fmt: Format) -> list[Script]:
    first, second = NAMES
    markers = dict.fromkeys((*fmt.markers, *fmt.special_tokens))
    made = [Script((Call(first),)), Script((Call(first, {"city": "Paris"}),))]
    made += [Script((Call(first, {"city": f"a {marker} b"}),)) for marker in markers]
    made += [Script((Call(first, arguments),)) for arguments in _ARGUMENTS]
    one = (Call(first, {"city": "Paris"}),)
    two = (*one, Call(second, {"q": "x"}))
    made += [
        Script(one, text_before="Let me check."),
        Script(one, text_after="Done."),
        Script(two),
        Script(two, text_between="And:"),
        # Near the format's edges: the output ends where its closing marker should stand, and
        # a declared tool whose name holds quotes (where the name is a JSON string).
        Script(one, unclosed=True),
        Script((Call(f'"{first}"'),)),
        # The same unicode value spelt with \u escapes, as some models write JSON strings.
        Script((Call(first, _ARGUMENTS[1]),), escaped=True),
    ]
    return [script for script in made if fmt.unwritable(script) is None]


def puppet_openings(fmt: Format, api: Api, stream: bool) -> list[tuple[Case, None]]:
    """Each opening script of ``fmt`` as a case on ``api``, with no choices to save."""
    return [(scripted_case(fmt, api, stream, script), None) for script in _scripts(fmt)]
