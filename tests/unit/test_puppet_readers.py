"""Every catalog format round-trips: what its writer renders reads back, with a small reader of
the format's family written here (JSON in markup, tagged parameters, Python calls), to the
script's names and arguments, and ``expected()`` agrees with the script.

The readers are deliberately naive and separate from the writers: a writer that drifts from its
format (a lost quote, a swapped tag) fails here before any server sees it.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

import pytest

from agentfuzz.puppet.formats import FORMATS, ArgumentStyle, Call, Format, Script

SCRIPTS = [
    Script((Call("get_weather", {"city": "Paris"}),)),
    Script((Call("get_weather", {"city": "Zürich 東京 🌧", "note": "naïve — ok"}),)),
    Script((Call("echo", {"q": 'say "hi" \\ back\\slash', "path": "C:\\temp\\n"}),)),
    Script((Call("plan", {"deep": {"a": [1, 2.5, {"b": "c"}], "d": {}}, "ok": True}),)),
    Script((Call("nothing", {}),)),
    Script(
        (
            Call("get_weather", {"city": "Paris", "days": 3}),
            Call("get_time", {"utc": False, "zone": None}),
        ),
        text_before="Let me look that up.",
    ),
]

# JSON formats whose arguments stand alone after a header that names the call.
_HEADERS = {
    "kimi_k2": r"<\|tool_call_begin\|>functions\.(?P<name>[^:<]*):\d+"
    r"<\|tool_call_argument_begin\|>",
    "mistral": r"\[TOOL_CALLS\](?P<name>[^\[]*)\[ARGS\]",
    "deepseek_v3": r"<｜tool▁sep｜>(?P<name>[^\n]*)\n```json\n",
    "deepseek_v31": r"<｜tool▁call▁begin｜>(?P<name>.*?)<｜tool▁sep｜>",
    "openai": r"to=functions\.(?P<name>\S+) <\|constrain\|>json<\|message\|>",
}

# Tagged-parameter formats: a call's name and body, then each parameter's key and value.
_QWEN = (
    r"<function=(?P<name>[^>]*)>\n(?P<body>.*?)</function>",
    r"<parameter=(?P<key>[^>]*)>\n(?P<value>.*?)\n</parameter>",
)
_GLM = (
    r"<tool_call>(?P<name>[^<\n]*)\n?(?P<body>.*?)</tool_call>",
    r"<arg_key>(?P<key>.*?)</arg_key>\n?<arg_value>(?P<value>.*?)</arg_value>",
)
_PARAMS = {
    "qwen3_xml": _QWEN,
    "qwen3_coder": _QWEN,
    "step3p5": _QWEN,
    "seed_oss": _QWEN,
    "glm45": _GLM,
    "glm47": _GLM,
    "minimax_m2": (
        r'<invoke name="(?P<name>[^"]*)">\n(?P<body>.*?)</invoke>',
        r'<parameter name="(?P<key>[^"]*)">(?P<value>.*?)</parameter>',
    ),
    "step3": (
        r'<steptml:invoke name="(?P<name>[^"]*)">(?P<body>.*?)</steptml:invoke>',
        r'<steptml:parameter name="(?P<key>[^"]*)">(?P<value>.*?)</steptml:parameter>',
    ),
    "functiongemma": (
        r"call:(?P<name>\w+)\{(?P<body>.*?)\}<end_function_call>",
        r"(?P<key>\w+):<escape>(?P<value>.*?)<escape>",
    ),
}


def _json_values(text: str) -> list[Any]:
    """Every top-level JSON object or list in ``text``, in order."""
    decoder, found, index = json.JSONDecoder(), [], 0
    while (match := re.compile(r"[\[{]").search(text, index)) is not None:
        try:
            value, end = decoder.raw_decode(text, match.start())
        except ValueError:
            index = match.start() + 1
            continue
        found.append(value)
        index = end
    return found


def _read_json(fmt: Format, text: str) -> list[tuple[str, Any]]:
    if fmt.name in _HEADERS:
        decoder = json.JSONDecoder()
        return [
            (m["name"], decoder.raw_decode(text, m.end())[0])
            for m in re.finditer(_HEADERS[fmt.name], text)
        ]
    envelopes: list[dict[str, Any]] = []
    for value in _json_values(text):
        envelopes += value if isinstance(value, list) else [value]
    return [(e["name"], e.get("arguments", e.get("parameters"))) for e in envelopes]


def _read_params(fmt: Format, text: str) -> list[tuple[str, dict[str, str]]]:
    call_re, param_re = _PARAMS[fmt.name]
    return [
        (
            m["name"],
            {p["key"]: p["value"] for p in re.finditer(param_re, m["body"], re.S)},
        )
        for m in re.finditer(call_re, text, re.S)
    ]


_JSON_NAMES = {"true": True, "false": False, "null": None}


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Name):
        return _JSON_NAMES[node.id]
    if isinstance(node, ast.List):
        return [_literal(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
    return ast.literal_eval(node)


def _read_python(fmt: Format, text: str) -> list[tuple[str, Any]]:
    code = text.removeprefix("<|python_start|>").removesuffix("<|python_end|>")
    if fmt.name == "olmo3":
        lines = code.removeprefix("<function_calls>\n").removesuffix("\n</function_calls>")
        code = "[" + ", ".join(lines.split("\n")) + "]"
    tree = ast.parse(code, mode="eval").body
    assert isinstance(tree, ast.List)
    calls = []
    for node in tree.elts:
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        calls.append((node.func.id, {k.arg: _literal(k.value) for k in node.keywords}))
    return calls


def _exact(value: Any) -> str:
    """A value compared as JSON spells it: ``True`` and ``1`` differ, as they do on the wire."""
    return json.dumps(value, sort_keys=True)


def _same_param(written: str, value: Any) -> bool:
    if isinstance(value, str):
        return written == value
    return _exact(json.loads(written)) == _exact(value)


def _writable(fmt: Format, script: Script) -> Script | None:
    """The script, or the script without its prose or its second call, if the format takes
    that; None when it cannot express even that."""
    for candidate in (script, Script(script.calls), Script(script.calls[:1])):
        if fmt.unwritable(candidate) is None:
            return candidate
    return None


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_reads_back_to_its_script(name: str) -> None:
    fmt = FORMATS[name]
    written = 0
    for original in SCRIPTS:
        script = _writable(fmt, original)
        if script is None:
            continue
        written += 1
        text = fmt.write(script)
        assert not fmt.markers or any(marker in text for marker in fmt.markers), text
        want = [(call.name, call.arguments) for call in script.calls]
        if fmt.arguments is ArgumentStyle.JSON:
            assert _exact(_read_json(fmt, text)) == _exact(want), text
        elif fmt.arguments is ArgumentStyle.PYTHON:
            assert _exact(_read_python(fmt, text)) == _exact(want), text
        else:
            got = _read_params(fmt, text)
            assert [n for n, _ in got] == [n for n, _ in want], text
            for (_, params), (_, arguments) in zip(got, want, strict=True):
                assert params.keys() == arguments.keys(), text
                assert all(_same_param(params[k], v) for k, v in arguments.items()), text
        if script.text_before:
            assert text.startswith(script.text_before)
    assert written >= 4, f"{name} wrote only {written} of the scripts"


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_the_truth_is_the_script(name: str) -> None:
    fmt = FORMATS[name]
    for original in SCRIPTS:
        script = _writable(fmt, original)
        if script is None:
            continue
        truth = fmt.expected(script)
        assert [(c.name, c.arguments) for c in truth.calls] == [
            (c.name, c.arguments) for c in script.calls
        ]
        assert truth.same_content(script.text_before or None)
        assert all((c.id is not None) == fmt.carries_ids for c in truth.calls)
