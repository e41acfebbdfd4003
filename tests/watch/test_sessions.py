"""How the proxy tells one conversation from another, and which history it knows is the
server's own: the session oracles judge real traffic as they judge session mode."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from agentfuzz.runs.watch import Watch, watching

from .conftest import Quiet, proxied, serving

_CALL = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
_TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


def _chat(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
    }


@contextmanager
def _refuses_its_own_history() -> Iterator[str]:
    """A chat server that calls ``f`` as ``call_1``, then refuses (400) any history holding an
    assistant message: a server that cannot take back its own output."""

    class Handler(Quiet):
        def do_POST(self) -> None:
            body = self.body()
            replied = any(m.get("role") == "assistant" for m in body["messages"])
            if replied:
                self.send_json(400, {"error": {"message": "bad history"}})
            else:
                message = {"role": "assistant", "content": None, "tool_calls": [_CALL]}
                self.send_json(200, _chat(message, "tool_calls"))

    with serving(Handler) as url:
        yield url


def _second_turn(call_id: str) -> list[dict[str, Any]]:
    call = _CALL | {"id": call_id}
    return [
        {"role": "user", "content": "use f"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": "done"},
    ]


def _watch_two_turns(tmp_path: Path, call_id: str) -> Watch:
    with _refuses_its_own_history() as base:
        watch = Watch(base, tmp_path, say=lambda _: None)
        try:
            with watching(base, watch) as url, httpx.Client() as client:
                first = [{"role": "user", "content": "use f"}]
                for messages in (first, _second_turn(call_id)):
                    body = {"model": "m", "messages": messages, "tools": _TOOLS}
                    client.post(url + "/chat/completions", json=body)
        finally:
            watch.close()
    return watch


def test_a_refusal_of_the_servers_own_history_is_a_self_rejection(tmp_path: Path) -> None:
    watch = _watch_two_turns(tmp_path, "call_1")
    [session] = watch.sessions.all
    assert [t.case.session.untouched for t in session.turns if t.case.session] == [True, True]
    assert session.turns[1].case.session is not None
    assert session.turns[1].case.session.echoed == ("call_1",)
    assert [c.violation.oracle for c in watch.caught] == ["self_rejection"]
    assert watch.caught[0].turn == 2


def test_a_history_the_client_changed_is_not_the_servers_own(tmp_path: Path) -> None:
    watch = _watch_two_turns(tmp_path, "call_1_renamed")
    [session] = watch.sessions.all
    assert session.turns[1].case.session is not None
    assert session.turns[1].case.session.untouched is False
    assert watch.caught == []


def test_conversations_are_told_apart_by_their_history_and_previous_response_id(
    tmp_path: Path,
) -> None:
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
    with proxied("fixed", tmp_path) as (url, watch), httpx.Client() as client:

        def post(body: dict[str, Any]) -> dict[str, Any]:
            answer = client.post(url + "/responses", json={"model": "m", **body})
            return dict(answer.json())

        a1 = post({"input": [{"role": "user", "content": "Use get_weather."}], "tools": tools})
        b1 = post({"input": [{"role": "user", "content": "Hello."}]})
        # A continues by its id; B by sending its whole history back.
        call = next(o for o in a1["output"] if o["type"] == "function_call")
        result = {"type": "function_call_output", "call_id": call["call_id"], "output": "ok"}
        post({"previous_response_id": a1["id"], "input": [result], "tools": tools})
        history = [{"role": "user", "content": "Hello."}, *b1["output"]]
        post({"input": [*history, {"role": "user", "content": "More."}]})
        # A new conversation that starts like B's first request did.
        post({"input": [{"role": "user", "content": "Hello."}]})
    assert [len(s.turns) for s in watch.sessions.all] == [2, 2, 1]
