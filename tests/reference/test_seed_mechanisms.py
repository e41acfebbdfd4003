"""Each buggy profile shows its seed mechanism on a hand-built request; its fix answers cleanly."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from .wire import CHAT_TOOLS, MARKUP, RESPONSES_TOOLS, assert_clean, identity_stable, send

ARGS = json.dumps({"city": "Paris", "days": 2})
MODES = [("chat", False), ("chat", True), ("responses", False), ("responses", True)]


def request(
    api: str, stream: bool, call_id: str, ask: str = "Now use get_weather.", **kw: Any
) -> dict[str, Any]:
    """user -> call (with ``call_id``) -> its result -> user: seed 000's four-item history."""
    if api == "chat":
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": "get_weather", "arguments": ARGS},
        }
        history: list[Any] = [
            {"role": "user", "content": "Use get_weather for Paris."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": '{"temp_c": 17}'},
            {"role": "user", "content": ask},
        ]
        out = {"model": "m", "messages": history, "tools": CHAT_TOOLS, "stream": stream}
    else:
        history = [
            {"type": "message", "role": "user", "content": "Use get_weather for Paris."},
            {"type": "function_call", "call_id": call_id, "name": "get_weather", "arguments": ARGS},
            {"type": "function_call_output", "call_id": call_id, "output": '{"temp_c": 17}'},
            {"type": "message", "role": "user", "content": ask},
        ]
        out = {"model": "m", "input": history, "tools": RESPONSES_TOOLS, "stream": stream}
    out.update(kw)
    return out


def is_empty(turn: Any) -> bool:
    return turn.status == 200 and turn.error is None and not turn.text.strip() and not turn.calls


# seed 000 ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("api", "stream"), MODES)
def test_vllm_kimi_k2_foreign_id_gives_empty_turn(
    serve: Callable[..., str], api: str, stream: bool
) -> None:
    turn = send(serve("vllm-kimi-k2"), api, request(api, stream, "call_4144fac2c5e1f3e0"))
    assert is_empty(turn), turn


@pytest.mark.parametrize("profile", ["vllm-kimi-k2-fixed", "vllm-kimi-k2-loose-fix", "fixed"])
@pytest.mark.parametrize(("api", "stream"), MODES)
def test_renumbering_fixes_call_hex(
    serve: Callable[..., str], profile: str, api: str, stream: bool
) -> None:
    turn = send(serve(profile), api, request(api, stream, "call_4144fac2c5e1f3e0"))
    assert_clean(turn)
    assert [c["name"] for c in turn.calls] == ["get_weather"]
    if not (api == "responses" and stream and profile != "fixed"):
        assert turn.calls[0]["id"] == "functions.get_weather:1"


def test_vllm_kimi_k2_native_history_still_works(serve: Callable[..., str]) -> None:
    turn = send(
        serve("vllm-kimi-k2"), "responses", request("responses", True, "functions.get_weather:0")
    )
    assert_clean(turn)


def test_vllm_kimi_k2_streaming_responses_mints_call_hex(serve: Callable[..., str]) -> None:
    url = serve("vllm-kimi-k2")
    streamed = send(
        url,
        "responses",
        {"model": "m", "input": "use get_weather", "tools": RESPONSES_TOOLS, "stream": True},
    )
    assert re.fullmatch(r"call_[0-9a-f]{16}", streamed.calls[0]["id"])
    plain = send(
        url, "responses", {"model": "m", "input": "use get_weather", "tools": RESPONSES_TOOLS}
    )
    assert plain.calls[0]["id"] == "functions.get_weather:0"


def test_vllm_kimi_k2_dropped_call_leaves_index_gap(serve: Callable[..., str]) -> None:
    body = request("chat", True, "call_4144fac2c5e1f3e0", ask="Use get_weather and read_file.")
    turn = send(serve("vllm-kimi-k2"), "chat", body)
    assert turn.indexes == [1]
    assert [c["name"] for c in turn.calls] == ["read_file"]
    fixed = send(serve("vllm-kimi-k2-fixed"), "chat", body)
    assert fixed.indexes == [0, 1]
    assert_clean(fixed)


@pytest.mark.parametrize(("api", "stream"), MODES)
def test_loose_fix_still_breaks_on_near_native_id(
    serve: Callable[..., str], api: str, stream: bool
) -> None:
    body = request(api, stream, "call_abc123:0")
    assert is_empty(send(serve("vllm-kimi-k2-loose-fix"), api, body))
    assert_clean(send(serve("vllm-kimi-k2-fixed"), api, body))


# seed 001 ---------------------------------------------------------------------------------


def test_exo_sanitised_id_breaks_both_ways(serve: Callable[..., str]) -> None:
    url = serve("exo-kimi-k2")
    plain = send(url, "chat", request("chat", False, "functions_get_weather_0"))
    assert plain.status == 500
    with pytest.raises(ValueError):
        json.loads(plain.body)
    streamed = send(url, "chat", request("chat", True, "functions_get_weather_0"))
    assert streamed.error is not None
    assert (
        "<|tool_call_begin|>functions_get_weather_1<|tool_call_argument_begin|>" in streamed.error
    )
    resp = send(url, "responses", request("responses", True, "functions_get_weather_0"))
    assert resp.error is not None and MARKUP.search(resp.error)
    assert (
        send(url, "responses", request("responses", False, "functions_get_weather_0")).status == 500
    )


def test_exo_first_call_in_a_session_succeeds(serve: Callable[..., str]) -> None:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "use get_weather"}],
        "tools": CHAT_TOOLS,
    }
    turn = send(serve("exo-kimi-k2"), "chat", body)
    assert_clean(turn)
    assert turn.calls[0]["id"] == "functions.get_weather:0"


@pytest.mark.parametrize(
    "call_id", ["functions_get_weather_0", "call_4144fac2c5e1f3e0", "Bash:0", ""]
)
@pytest.mark.parametrize(("api", "stream"), MODES)
def test_exo_fixed_answers(serve: Callable[..., str], call_id: str, api: str, stream: bool) -> None:
    turn = send(serve("exo-kimi-k2-fixed"), api, request(api, stream, call_id))
    assert_clean(turn)
    assert turn.calls[0]["id"] == "functions.get_weather:1"


# seeds 002 and 003 ------------------------------------------------------------------------


def test_regen_completed_reminted_ids(serve: Callable[..., str]) -> None:
    body = {"model": "m", "input": "use get_weather", "tools": RESPONSES_TOOLS, "stream": True}
    turn = send(serve("vllm-responses-regen"), "responses", body)
    assert not identity_stable(turn)
    streamed = [e for e in turn.identity if e[0] == "response.output_item.done"]
    completed = [e for e in turn.identity if e[0] == "completed"]
    assert streamed[0][3].startswith("call_") and completed[0][3].startswith("chatcmpl-tool-")
    assert streamed[0][2] != completed[0][2]
    assert_clean(send(serve("fixed"), "responses", body))


def test_gpt_oss_reasoning_ids_msg_then_rs(serve: Callable[..., str]) -> None:
    body = {"model": "m", "input": "use get_weather", "tools": RESPONSES_TOOLS, "stream": True}
    turn = send(serve("vllm-gpt-oss"), "responses", body)
    done = [e for e in turn.identity if e[0] == "response.output_item.done"]
    final = [e for e in turn.identity if e[0] == "completed"]
    assert done[0][1] == "reasoning" and done[0][2].startswith("msg_")
    assert final[0][1] == "reasoning" and final[0][2].startswith("rs_")
    assert done[1][3] != final[1][3]  # function_call call_id re-minted
    fixed = send(serve("vllm-gpt-oss-fixed"), "responses", body)
    assert_clean(fixed)
    assert all(e[2].startswith(("rs_", "fc_")) for e in fixed.identity)


# seed 004 ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("api", "stream"), MODES)
def test_no_tools_leak_markup_in_content(serve: Callable[..., str], api: str, stream: bool) -> None:
    body = request(api, stream, "functions.get_weather:0")
    del body["tools"]
    leaked = send(serve("no-tools-leak"), api, body)
    assert "<|tool_calls_section_begin|>" in leaked.text
    assert_clean(send(serve("fixed"), api, body), tools=False)
