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


@contextmanager
def _minting(fail_first: int = 0) -> Iterator[str]:
    """A chat server that calls ``f`` under a new id each time (``call_1``, ``call_2``, …)
    when the last message is the user's, and says "done" after a tool result; the first
    ``fail_first`` requests get a 500."""
    count = {"calls": 0, "requests": 0}

    class Handler(Quiet):
        def do_POST(self) -> None:
            body = self.body()
            count["requests"] += 1
            if count["requests"] <= fail_first:
                self.send_json(500, {"error": {"message": "busy"}})
            elif body["messages"][-1]["role"] == "user":
                count["calls"] += 1
                call = _CALL | {"id": f"call_{count['calls']}"}
                message = {"role": "assistant", "content": None, "tool_calls": [call]}
                self.send_json(200, _chat(message, "tool_calls"))
            else:
                self.send_json(200, _chat({"role": "assistant", "content": "done"}, "stop"))

    with serving(Handler) as url:
        yield url


def _watched(base: str, tmp_path: Path, *turns: list[dict[str, Any]]) -> tuple[Watch, list[Any]]:
    """Post each chat history in turn through the proxy; the watch and each answer's body."""
    watch = Watch(base, tmp_path, say=lambda _: None)
    answers = []
    try:
        with watching(base, watch) as url, httpx.Client() as client:
            for messages in turns:
                body = {"model": "m", "messages": messages, "tools": _TOOLS}
                answers.append(client.post(url + "/chat/completions", json=body).json())
    finally:
        watch.close()
    return watch, answers


def test_two_clients_opening_alike_and_interleaved_are_two_sessions(tmp_path: Path) -> None:
    """Two agents ask the same first question at once; each then sends back its own call (the
    server minted call_1 for A, call_2 for B), B before A. Each is a session of its own."""
    ask = [{"role": "user", "content": "use f"}]
    with _minting() as base:
        watch, _ = _watched(
            base, tmp_path, ask, ask, _second_turn("call_2"), _second_turn("call_1")
        )
    assert [len(s.turns) for s in watch.sessions.all] == [2, 2]
    for session, own in zip(watch.sessions.all, ("call_1", "call_2"), strict=True):
        first, second = session.turns
        assert [c.id for c in first.observation.tool_calls] == [own]
        assert [c.id for c in second.case.history.calls] == [own]
        assert second.case.session is not None and second.case.session.untouched


def test_a_second_client_asking_what_a_finished_one_asked_is_a_new_session(
    tmp_path: Path,
) -> None:
    """Agent A asked once and had its whole answer; agent B, started after it, asks the same
    and goes on for two more requests: session 2, turns 1 to 3 (not session 1, turn 4)."""
    hello = [{"role": "user", "content": "Hello."}]
    with proxied("fixed", tmp_path) as (url, watch), httpx.Client() as client:

        def post(messages: list[dict[str, Any]]) -> dict[str, Any]:
            answer = client.post(
                url + "/chat/completions", json={"model": "m", "messages": messages}
            )
            return dict(answer.json()["choices"][0]["message"])

        post(hello)  # A
        said = post(hello)  # B
        history = [*hello, said, {"role": "user", "content": "More."}]
        said = post(history)
        post([*history, said, {"role": "user", "content": "Thanks."}])
    assert [len(s.turns) for s in watch.sessions.all] == [1, 3]


def test_the_same_history_sent_again_after_a_500_is_that_sessions_retry(tmp_path: Path) -> None:
    ask = [{"role": "user", "content": "use f"}]
    with _minting(fail_first=1) as base:
        watch, answers = _watched(base, tmp_path, ask, ask, _second_turn("call_1"))
    assert "error" in answers[0] and answers[1]["choices"]
    [session] = watch.sessions.all
    assert len(session.turns) == 3
