"""After reduction: valid where the fault allows, the modes it reproduces on, the server's ids."""

from agentfuzz.model.history import AssistantMessage, Case, History, Tool, ToolCall, UserMessage
from agentfuzz.model.observation import Exchange, Observation
from agentfuzz.reduce.explain import explain

ALL = (("chat", False), ("chat", True), ("responses", False), ("responses", True))
HEX = "call_5f0e1d2c3b4a6978"


def _case() -> Case:
    call = AssistantMessage(tool_calls=(ToolCall(id="call_0", name="get_weather"),))
    items = (UserMessage(text=""), call, UserMessage(text=""))
    return Case(history=History(tools=(Tool(name="get_weather"),), items=items))


def _obs(case: Case) -> Observation:
    return Observation(exchange=Exchange(url=case.api, request={}, stream=case.stream, status=200))


def _kimi_like(case: Case) -> Observation | None:
    """A Kimi-K2 server: any history id that is not ``functions.NAME:IDX`` empties the turn."""
    native = all(c.id.startswith("functions.") for c in case.history.calls)
    return None if native else _obs(case)


def test_the_server_minted_id_and_its_mode_become_the_repro() -> None:
    minted = {
        "chat/no-stream": [("get_weather", "functions.get_weather:0")],
        "responses/stream": [("get_weather", HEX)],
    }
    done = explain(_case(), _kimi_like, ALL, minted)
    # The chat-minted id is native: the fault does not fire with it, so that mode is passed.
    assert (done.case.api, done.case.stream) == ("responses", True)
    assert [c.id for c in done.case.history.calls] == [HEX]
    assert done.mechanism == {"minted_on": "responses/stream", "ids": [HEX]}
    assert done.reproduces_on[0] == "responses/stream" and len(done.reproduces_on) == 4
    assert done.needs == () and done.observation is not None


def test_no_mechanism_is_claimed_when_the_minted_ids_cure_it() -> None:
    minted = {m: [("get_weather", "functions.get_weather:0")] for m in ("chat/no-stream",)}
    done = explain(_case(), _kimi_like, ALL, minted)
    assert done.mechanism is None
    assert [c.id for c in done.case.history.calls] == ["call_0"]


def test_modes_it_does_not_reproduce_on_are_left_out() -> None:
    def chat_only(case: Case) -> Observation | None:
        return _obs(case) if case.api == "chat" else None

    done = explain(_case(), chat_only, ALL, {})
    assert done.reproduces_on == ("chat/no-stream", "chat/stream")


def test_a_minted_id_for_another_tool_comes_with_that_tools_name() -> None:
    """The server minted no call of the repro's tool: the repro's tool takes the name of one it
    did (declaration and call), so the history holds the server's own call, name and id."""
    minted = {"responses/stream": [("ns__find", "call_1"), ("lookup", HEX)]}
    done = explain(_case(), _kimi_like, ALL, minted)
    assert done.mechanism == {"minted_on": "responses/stream", "ids": [HEX]}
    # The plain name before the namespaced one, both minted.
    assert [(c.name, c.id) for c in done.case.history.calls] == [("lookup", HEX)]
    assert [t.name for t in done.case.history.tools] == ["lookup"]


def test_a_minted_id_is_never_paired_with_another_tools_name() -> None:
    """A failure that needs its tool's own name is not moved onto another: no mechanism."""

    def needs_its_name(case: Case) -> Observation | None:
        named = all(c.name == "get_weather" for c in case.history.calls)
        return _kimi_like(case) if named else None

    minted = {"responses/stream": [("lookup", HEX)]}
    done = explain(_case(), needs_its_name, ALL, minted)
    assert done.mechanism is None
    assert [(c.name, c.id) for c in done.case.history.calls] == [("get_weather", "call_0")]


KIMI_CHAT = {"chat/no-stream": [("get_weather", "functions.get_weather:0")]}


def test_a_failure_the_servers_own_id_shape_clears_names_the_ids_as_its_trigger() -> None:
    done = explain(_case(), _kimi_like, ALL, KIMI_CHAT)
    assert done.cleared_by == {
        "shape": "kimi_native",
        "minted_on": "chat/no-stream",
        "ids": ["functions.get_weather:0"],
    }
    # Only said, never kept: the repro still fails with the ids it had.
    assert [c.id for c in done.case.history.calls] == ["call_0"]


def test_no_trigger_is_claimed_when_the_own_shape_fails_too_or_misses_only_once() -> None:
    assert explain(_case(), lambda c: _obs(c), ALL, KIMI_CHAT).cleared_by is None
    misses = iter([None])

    def flaky(case: Case) -> Observation | None:
        # Misses once with native ids, then fires again: not a cure.
        if all(c.id.startswith("functions.") for c in case.history.calls):
            return next(misses, _obs(case))
        return _obs(case)

    assert explain(_case(), flaky, ALL, KIMI_CHAT).cleared_by is None


def test_each_shape_the_server_minted_is_tried_and_unknown_shapes_are_not() -> None:
    mixed = {"chat/no-stream": [("get_weather", HEX), ("get_weather", "functions.get_weather:0")]}
    cleared = explain(_case(), _kimi_like, ALL, mixed).cleared_by
    assert cleared is not None and cleared["shape"] == "kimi_native"
    odd = {"chat/no-stream": [("get_weather", "%%not-a-known-shape%%")]}
    assert explain(_case(), _kimi_like, ALL, odd).cleared_by is None


def test_a_turn_the_repair_made_removable_goes_but_the_last_user_message_stays() -> None:
    # The shrunk shape: empty user turn, a call with no result, an empty user turn. Filled in and
    # answered, the trailing user turn no longer matters to this fault, and the first user
    # message is what makes it a conversation.
    done = explain(_case(), _kimi_like, ALL, {})
    kinds = [type(it).__name__ for it in done.case.history.items]
    assert kinds == ["UserMessage", "AssistantMessage", "ToolResult"]
    assert done.needs == ()


def test_a_server_that_stops_answering_meanwhile_clears_nothing() -> None:
    calls = [0]

    def goes_quiet(case: Case) -> Observation | None:
        # Fires until the shape check begins, then never again: no fault seen is not a cure.
        calls[0] += 1
        native = all(c.id.startswith("functions.") for c in case.history.calls)
        return None if native or calls[0] > 7 else _obs(case)

    assert explain(_case(), goes_quiet, ALL, KIMI_CHAT).cleared_by is None


def test_a_tool_choice_naming_the_adopted_tool_follows_its_new_name() -> None:
    case = _case()
    case = case.model_copy(
        update={"options": case.options.model_copy(update={"tool_choice": "get_weather"})}
    )
    done = explain(case, _kimi_like, ALL, {"responses/stream": [("lookup", HEX)]})
    assert done.case.options.tool_choice == "lookup"
