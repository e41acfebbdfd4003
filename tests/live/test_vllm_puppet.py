"""The live vLLM target's puppet pieces, offline: the markers the puppet models add, the template a
parser without its own is served with, and the campaign's choice of parsers.

No built cache and no vLLM: the models themselves are made and checked by build.py and
puppet_check.py where the cache can be built (.ci/run).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentfuzz.puppet.formats import FORMATS
from tests.live.test_vllm_parsers import HERE, TOOLS, _environment, _isolated

with _isolated(("_kit", "puppet_check", "puppet_model", "puppet_campaign")):
    sys.path.insert(0, str(HERE))
    import puppet_campaign
    import puppet_check
    import puppet_model


def test_every_catalog_marker_is_added_once() -> None:
    tokens = puppet_model.marker_tokens()
    assert tokens == sorted(set(tokens))
    for fmt in FORMATS.values():
        assert set(fmt.special_tokens) <= set(tokens), fmt.name
    # The markers whose parsers refuse to start without them as tokens (checked on 2026-12-07).
    assert {"[TOOL_CALLS]", "<|python_tag|>", "<tool_calls>"} <= set(tokens)


def test_tiny_model_keeps_the_cpu_attention_head_size() -> None:
    tiny = puppet_model.TINY
    assert tiny["hidden_size"] == tiny["num_attention_heads"] * tiny["head_dim"]
    assert tiny["head_dim"] == 64


def test_a_parser_without_a_template_gets_the_plain_one() -> None:
    assert puppet_check.template_for("hermes") == HERE / "templates" / "hermes.jinja"
    assert puppet_check.template_for("mistral") == HERE / "puppet_templates" / "plain.jinja"
    assert puppet_check.template_for("kimi_k2") == HERE / "puppet_templates" / "kimi_k2.jinja"
    assert puppet_check.WEIGHTS[0] == "puppet-tiny"


def test_the_plain_template_renders_a_conversation_without_markup() -> None:
    function = {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    call = {"id": "call_7", "type": "function", "function": function}
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_7", "content": "sunny"},
    ]
    template = _environment().from_string((HERE / "puppet_templates" / "plain.jinja").read_text())
    text = str(template.render(messages=messages, tools=TOOLS, add_generation_prompt=True))
    assert text.startswith("<|im_start|>system\nBe brief.\n\nTools: [")
    assert '"id": "call_7", "name": "get_weather"' in text  # a mimic can copy the id
    assert "<|im_start|>tool\ncall_7: sunny<|im_end|>" in text
    assert "<|im_start|>user\nWeather?<|im_end|>" in text
    assert text.endswith("<|im_start|>assistant\n")
    markers = {m for fmt in FORMATS.values() for m in fmt.markers}
    assert not [m for m in markers if m in text]


def test_the_campaign_covers_the_catalog_and_refuses_an_unknown_parser(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert tuple(FORMATS) == puppet_campaign.PARSERS
    code = puppet_campaign.main(["--parsers", "hermes,nope", "--cache", str(tmp_path)])
    assert code == 2
    assert capsys.readouterr().out.strip() == (
        "puppet_campaign.py: not formats of the catalog: nope"
    )


def test_the_kimi_template_renders_history_ids_verbatim() -> None:
    """Seed 000's prompt: a minted `call_` id reaches the call header and the result's heading."""
    function = {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    call = {"id": "call_4144fac2", "type": "function", "function": function}
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_4144fac2", "content": "sunny"},
    ]
    path = HERE / "puppet_templates" / "kimi_k2.jinja"
    template = _environment().from_string(path.read_text())
    text = str(template.render(messages=messages, tools=TOOLS, add_generation_prompt=True))
    header = "<|tool_call_begin|>call_4144fac2<|tool_call_argument_begin|>"
    assert header + '{"city": "Paris"}<|tool_call_end|>' in text
    assert "## Return of call_4144fac2\nsunny" in text
    assert "functions." not in text


def test_an_unbuilt_cache_is_skipped_with_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """.ci/run's step: no venv, or a venv from before the puppet models, is one line and 0."""
    assert puppet_campaign.main(["--skip-unbuilt", "--cache", str(tmp_path)]) == 0
    (tmp_path / "venv.done").write_text("{}")
    assert puppet_campaign.main(["--skip-unbuilt", "--cache", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(line.startswith("live-vllm-puppet: skipped:") for line in lines)
