"""The live vLLM target's tool parsers: templates, markup, command line and derived profiles agree.

No network, no built cache, no vLLM: each chat template is rendered with jinja2 the way
transformers renders chat templates (a sandbox, trim_blocks and lstrip_blocks, a `tojson` that
escapes no HTML), and the calls are read back from the text with the format's own syntax.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from agentfuzz.request.profiles import load_profile

LIVE = Path(__file__).resolve().parents[2] / "live"
HERE = LIVE / "vllm"
TEMPLATES = HERE / "templates"
STOCK = LIVE.parent / "strategies" / "vllm-cpu.toml"


@contextlib.contextmanager
def _isolated(names: tuple[str, ...]) -> Iterator[None]:
    """Leave sys.path and the modules `names` as they were: the live scripts put their own folder
    first and import `serve`, a name every target uses."""
    path, saved = list(sys.path), {name: sys.modules.get(name) for name in names}
    try:
        yield
    finally:
        sys.path[:] = path
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def _load(name: str, extra: dict[str, ModuleType] | None = None) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"live_vllm_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with _isolated(("serve", "_kit")):
        sys.modules.update(extra or {})
        spec.loader.exec_module(module)
    return module


serve = _load("serve")
campaign = _load("campaign", {"serve": serve})
build = _load("build")


# -- rendering ----------------------------------------------------------------------------------


def _environment() -> Any:
    pytest.importorskip("jinja2", reason="jinja2 is not installed in this venv")
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]
    )

    def tojson(value: Any, ensure_ascii: bool = False, indent: Any = None, **kw: Any) -> str:
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, **kw)

    env.filters["tojson"] = tojson
    return env


def render(parser: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    env = _environment()
    template = env.from_string((TEMPLATES / f"{parser}.jinja").read_text())
    return str(template.render(messages=messages, tools=tools, add_generation_prompt=True))


def _tool(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties}
    return {
        "type": "function",
        "function": {"name": name, "description": "d", "parameters": schema},
    }


TOOLS = [
    _tool("get_weather", {"city": {"type": "string"}}),
    _tool("get_time", {"city": {"type": "string"}, "utc": {"type": "boolean"}}),
]


def _call(id_: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": id_, "type": "function", "function": {"name": name, "arguments": arguments}}


def history(first: dict[str, Any], second: dict[str, Any]) -> list[dict[str, Any]]:
    """A user message, an assistant turn with two calls (arguments as vLLM hands them to a
    template: a mapping), their two results (one a string, one a list of text parts)."""
    return [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather and time in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                _call("call_1", "get_weather", first),
                _call("call_2", "get_time", second),
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny"},
        {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "14:05"}]},
    ]


# Each parser's rendering of the two calls {"city": "Paris"} and {"city": "Paris", "utc": true},
# exactly, and of the first result.
CALLS = {
    "hermes": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_time", "arguments": {"city": "Paris", "utc": true}}\n</tool_call>',
    "phi4_mini_json": 'functools[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
    '{"name": "get_time", "arguments": {"city": "Paris", "utc": true}}]',
    "pythonic": '[get_weather(city="Paris"), get_time(city="Paris", utc=True)]',
    "olmo3": '<function_calls>\nget_weather(city="Paris")\nget_time(city="Paris", utc=true)\n'
    "</function_calls>",
    "qwen3_xml": "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    "</function>\n</tool_call>\n<tool_call>\n<function=get_time>\n<parameter=city>\nParis\n"
    "</parameter>\n<parameter=utc>\ntrue\n</parameter>\n</function>\n</tool_call>",
    "glm45": "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>"
    "<tool_call>get_time<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>utc</arg_key>"
    "<arg_value>true</arg_value></tool_call>",
    "kimi_k2": "<|tool_calls_section_begin|>"
    '<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}'
    "<|tool_call_end|>"
    "<|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>"
    '{"city": "Paris", "utc": true}<|tool_call_end|>'
    "<|tool_calls_section_end|>",
}
RESULTS = {
    "hermes": "<|im_start|>user\n<tool_response>\nSunny\n</tool_response>\n<tool_response>\n"
    "14:05\n</tool_response><|im_end|>\n",
    "phi4_mini_json": "<|im_start|>tool\nSunny<|im_end|>\n<|im_start|>tool\n14:05<|im_end|>\n",
    "pythonic": "<|im_start|>ipython\nSunny<|im_end|>\n<|im_start|>ipython\n14:05<|im_end|>\n",
    "olmo3": "<|im_start|>environment\nSunny<|im_end|>\n<|im_start|>environment\n14:05<|im_end|>\n",
    "qwen3_xml": "<|im_start|>user\n<tool_response>\nSunny\n</tool_response>\n<tool_response>\n"
    "14:05\n</tool_response><|im_end|>\n",
    "glm45": "<|im_start|>observation\n<tool_response>\nSunny\n</tool_response>\n<tool_response>\n"
    "14:05\n</tool_response><|im_end|>\n",
    "kimi_k2": "<|im_start|>tool\n## Return of functions.get_weather:0\nSunny<|im_end|>\n"
    "<|im_start|>tool\n## Return of functions.get_time:1\n14:05<|im_end|>\n",
}


def _assistant_turn(text: str) -> str:
    turns = re.findall(r"<\|im_start\|>assistant\n(.*?)<\|im_end\|>", text, re.DOTALL)
    assert len(turns) == 1, turns
    return str(turns[0])


def _json_or_text(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


def _python_calls(source: str, json_literals: bool) -> list[tuple[str, dict[str, Any]]]:
    """Keyword calls read with Python's parser; values as Python literals, or as JSON ones."""
    calls = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)
            values = {
                kw.arg: json.loads(ast.get_source_segment(source, kw.value) or "")
                if json_literals
                else ast.literal_eval(kw.value)
                for kw in node.keywords
            }
            calls.append((node.func.id, values))
    return calls


def _xml_pairs(body: str, pattern: str) -> dict[str, Any]:
    return {key: _json_or_text(value) for key, value in re.findall(pattern, body, re.DOTALL)}


def read_hermes(turn: str) -> list[tuple[str, dict[str, Any]]]:
    payloads = re.findall(r"<tool_call>\n(.*?)\n</tool_call>", turn, re.DOTALL)
    return [(p["name"], p["arguments"]) for p in map(json.loads, payloads)]


def read_phi4(turn: str) -> list[tuple[str, dict[str, Any]]]:
    assert turn.startswith("functools[")
    return [(p["name"], p["arguments"]) for p in json.loads(turn.removeprefix("functools"))]


def read_olmo3(turn: str) -> list[tuple[str, dict[str, Any]]]:
    body = re.fullmatch(r"<function_calls>\n(.*)\n</function_calls>", turn, re.DOTALL)
    assert body is not None
    return [c for line in body.group(1).splitlines() for c in _python_calls(line, True)]


def read_qwen3(turn: str) -> list[tuple[str, dict[str, Any]]]:
    calls = re.findall(r"<tool_call>\n<function=(.*?)>\n(.*?)</function>\n</tool_call>", turn, re.S)
    pairs = r"<parameter=(.*?)>\n(.*?)\n</parameter>\n"
    return [(name, _xml_pairs(body, pairs)) for name, body in calls]


def read_glm45(turn: str) -> list[tuple[str, dict[str, Any]]]:
    calls = re.findall(r"<tool_call>([^<]*)(.*?)</tool_call>", turn, re.DOTALL)
    pairs = r"<arg_key>(.*?)</arg_key><arg_value>(.*?)</arg_value>"
    return [(name, _xml_pairs(body, pairs)) for name, body in calls]


def read_kimi(turn: str) -> list[tuple[str, dict[str, Any]]]:
    section = re.fullmatch(
        r"<\|tool_calls_section_begin\|>(.*)<\|tool_calls_section_end\|>", turn, re.DOTALL
    )
    assert section is not None
    call = (
        r"<\|tool_call_begin\|>functions\.(.*?):\d+<\|tool_call_argument_begin\|>(.*?)"
        r"<\|tool_call_end\|>"
    )
    calls = re.findall(call, section.group(1))
    return [(name, json.loads(args)) for name, args in calls]


READERS: dict[str, Callable[[str], list[tuple[str, dict[str, Any]]]]] = {
    "hermes": read_hermes,
    "phi4_mini_json": read_phi4,
    "pythonic": lambda turn: _python_calls(turn, False),
    "olmo3": read_olmo3,
    "qwen3_xml": read_qwen3,
    "glm45": read_glm45,
    "kimi_k2": read_kimi,
}


@pytest.mark.parametrize("parser", serve.PARSERS)
def test_a_template_writes_past_calls_and_results_in_its_parsers_format(parser: str) -> None:
    text = render(parser, history({"city": "Paris"}, {"city": "Paris", "utc": True}), TOOLS)
    assert text.startswith("<|im_start|>system\nBe brief.\n\n")
    assert text.count("Be brief.") == 1
    # Every tool is declared in the system turn, before the first user turn.
    system = text.split("<|im_start|>user\n", 1)[0]
    assert "get_weather" in system and "get_time" in system
    assert "<|im_start|>user\nWeather and time in Paris?<|im_end|>\n" in text
    assert f"<|im_start|>assistant\n{CALLS[parser]}<|im_end|>\n" in text
    assert RESULTS[parser] in text
    assert text.endswith(RESULTS[parser] + "<|im_start|>assistant\n")


ODD = {"city": 'Rio "de" Janeiro, [RJ]', "utc": False, "offset": None, "days": [1, 2.5]}


@pytest.mark.parametrize("parser", serve.PARSERS)
def test_arguments_survive_the_rendering(parser: str) -> None:
    # Quotes, brackets, booleans, null, a list: read back with the format's own syntax.
    text = render(parser, history({"city": "Paris"}, ODD), TOOLS)
    calls = READERS[parser](_assistant_turn(text))
    assert calls == [("get_weather", {"city": "Paris"}), ("get_time", ODD)]


@pytest.mark.parametrize("parser", serve.PARSERS)
def test_a_template_without_tools_is_plain_chatml(parser: str) -> None:
    messages = [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
    assert render(parser, messages, []) == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"


@pytest.mark.parametrize("parser", serve.PARSERS)
def test_text_before_calls_is_kept(parser: str) -> None:
    messages = history({"city": "Paris"}, {"city": "Paris", "utc": True})
    messages[2]["content"] = "Looking."
    turn = _assistant_turn(render(parser, messages, TOOLS))
    assert turn.startswith("Looking.")
    assert CALLS[parser] in turn


def test_kimi_keeps_its_own_ids_and_finds_each_result_by_id() -> None:
    messages = history({"city": "Paris"}, {"city": "Paris", "utc": True})
    messages[2]["tool_calls"][0]["id"] = "functions.get_weather:7"
    messages[3:] = [messages[4], messages[3]]  # results in the other order
    messages[3]["tool_call_id"], messages[4]["tool_call_id"] = "call_2", "functions.get_weather:7"
    text = render("kimi_k2", messages, TOOLS)
    assert "<|tool_call_begin|>functions.get_weather:7<|tool_call_argument_begin|>" in text
    assert "## Return of functions.get_time:1\n14:05" in text
    assert "## Return of functions.get_weather:7\nSunny" in text


# -- what the scripts say about each parser -----------------------------------------------------


def test_parsers_markup_and_templates_agree() -> None:
    assert serve.PARSERS[0] == "hermes"
    assert len(set(serve.PARSERS)) == len(serve.PARSERS)
    assert set(serve.MARKUP) == set(serve.PARSERS)
    assert {path.stem for path in TEMPLATES.glob("*.jinja")} == set(serve.PARSERS)
    assert serve.PARSER.choices == serve.PARSERS and serve.PARSER.flag == "--parser"


def test_matrix_reads_the_same_parsers() -> None:
    spec = importlib.util.spec_from_file_location("live_matrix_vllm", LIVE / "matrix.py")
    assert spec is not None and spec.loader is not None
    matrix = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = matrix  # for its dataclasses
    try:
        spec.loader.exec_module(matrix)
        assert matrix.TARGETS["vllm"].modes() == serve.PARSERS
    finally:
        sys.modules.pop(spec.name, None)


@pytest.mark.parametrize("parser", serve.PARSERS)
def test_markup_holds_chatml_and_the_formats_own_markers(parser: str) -> None:
    markup = serve.MARKUP[parser]
    assert markup[:3] == ("<|im_start|>", "<|im_end|>", "<|endoftext|>")
    assert len(set(markup)) == len(markup)
    rendered = CALLS[parser]
    for token in markup[3:]:  # each marker is one this format writes
        assert token.split("…")[0] in rendered, token


def test_the_default_parsers_markup_is_the_stock_profiles() -> None:
    assert load_profile(str(STOCK)).markup == serve.MARKUP["hermes"]


@pytest.mark.parametrize("parser", serve.PARSERS)
def test_the_command_line_names_the_parser_and_its_template(parser: str, tmp_path: Path) -> None:
    argv = serve.server_command(tmp_path, 8000, parser)
    assert argv[argv.index("--tool-call-parser") + 1] == parser
    assert argv[argv.index("--chat-template") + 1] == str(
        tmp_path / "templates" / f"{parser}.jinja"
    )
    assert "--enable-auto-tool-choice" in argv
    assert serve.server_command(tmp_path, 8000) == serve.server_command(tmp_path, 8000, "hermes")


def test_an_unbuilt_template_is_named(tmp_path: Path) -> None:
    for name in ("venv.done", "model.done", "launch.py"):
        (tmp_path / name).write_text("{}")
    with pytest.raises(serve.ServerError, match=r"no templates/glm45\.jinja"):
        serve.check_built(tmp_path, "glm45")
    with (
        pytest.raises(serve.ServerError, match="unknown tool parser"),
        serve.running(tmp_path, parser="nope"),
    ):
        pass


@pytest.mark.parametrize("parser", serve.PARSERS)
def test_the_derived_profile_loads_with_its_parsers_markup(parser: str, tmp_path: Path) -> None:
    chosen = campaign.profile(parser, folder=tmp_path)
    stock = load_profile(str(STOCK))
    if parser == "hermes":
        assert chosen == "vllm-cpu"
        return
    assert chosen == str(tmp_path / f"vllm-cpu-{parser}.toml")
    derived = load_profile(chosen)
    assert derived.name == f"vllm-cpu-{parser}"
    assert derived.markup == serve.MARKUP[parser]
    # Everything else is the stock profile's.
    ignored = {"name", "markup"}
    assert derived.model_dump(exclude=ignored) == stock.model_dump(exclude=ignored)


def test_the_store_is_a_second_mode_beside_the_parser() -> None:
    import argparse

    kit = argparse.Namespace(**serve.serve_main.__globals__)  # the _kit serve.py loaded
    parser = argparse.ArgumentParser()
    kit.add_modes(parser, (serve.PARSER, serve.STORE))
    chosen = kit.chosen_modes(
        parser.parse_args(["--responses-store", "on"]), (serve.PARSER, serve.STORE)
    )
    assert chosen == {"parser": "hermes", "store": "on"}
    assert kit.chosen_modes(parser.parse_args([]), (serve.PARSER, serve.STORE))["store"] == "off"
    with pytest.raises(SystemExit):
        parser.parse_args(["--responses-store", "maybe"])


def test_the_store_mode_adds_the_chain_relation_and_nothing_else(tmp_path: Path) -> None:
    stock = load_profile(str(STOCK))
    for parser in ("hermes", "olmo3"):
        derived = load_profile(campaign.profile(parser, "on", folder=tmp_path))
        assert derived.name == f"vllm-cpu-{parser}-store"
        assert derived.relations == (*stock.relations, "chain")
        assert derived.markup == serve.MARKUP[parser]
        ignored = {"name", "markup", "relations"}
        assert derived.model_dump(exclude=ignored) == stock.model_dump(exclude=ignored)
    assert "previous_response_id" in stock.surface  # what a chained turn needs drawn


# -- build.py copies the templates and notices an edit ------------------------------------------


def test_build_copies_the_templates_and_recopies_an_edited_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    build.install_templates(cache)
    assert build.templates_spec(cache / "templates") == build.templates_spec()
    assert json.loads((cache / "templates.done").read_text()) == build.templates_spec()
    build.install_templates(cache)
    assert "templates: up to date" in capsys.readouterr().out
    (cache / "templates" / "glm45.jinja").write_text("edited")
    build.install_templates(cache)
    assert "templates: installed" in capsys.readouterr().out
    assert (cache / "templates" / "glm45.jinja").read_bytes() == (
        TEMPLATES / "glm45.jinja"
    ).read_bytes()


def test_the_templates_spec_changes_with_a_templates_text(tmp_path: Path) -> None:
    (tmp_path / "a.jinja").write_text("one")
    before = build.templates_spec(tmp_path)
    (tmp_path / "a.jinja").write_text("two")
    assert build.templates_spec(tmp_path) != before
    assert set(before) == {"a.jinja"}
