"""The agent history: what a client sends, in a form that belongs to no wire dialect.

Everything here is a frozen pydantic model. Dialects (``agentfuzz.wire.dialects``) turn a
``Case`` into the exact JSON of a ``/v1/chat/completions`` or ``/v1/responses`` request;
strategies build ``Case`` values; nothing in this module knows about either.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Api",
    "AssistantMessage",
    "Case",
    "ForeignItem",
    "Frozen",
    "History",
    "Item",
    "Options",
    "Provenance",
    "ReasoningItem",
    "SystemMessage",
    "Tool",
    "ToolCall",
    "ToolResult",
    "UserMessage",
]

Api = Literal["chat", "responses"]


class Frozen(BaseModel):
    """A value that never changes once made, and takes no field it does not name."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Tool(Frozen):
    """A function the client declares. ``namespace`` groups it (Responses ``namespace`` tools).

    ``strict``: the function's ``strict`` flag (structured arguments); None leaves it out of a
    chat request, and a Responses request, which always carries one, says false.
    """

    name: str
    namespace: str | None = None
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool | None = None

    @property
    def flat_name(self) -> str:
        """The name as a dialect without namespaces sees it (Kimi's ``namespace__name``)."""
        return f"{self.namespace}__{self.name}" if self.namespace else self.name


class ToolCall(Frozen):
    """One call an assistant made. ``arguments`` is raw: it may be malformed on purpose.

    ``id`` is the call id (chat ``id``, Responses ``call_id``); ``item_id`` is the Responses
    item id (``fc_…``), kept when a session echoes a server's own item back.
    """

    id: str
    name: str
    namespace: str | None = None
    arguments: str = "{}"
    item_id: str | None = None

    @property
    def flat_name(self) -> str:
        return f"{self.namespace}__{self.name}" if self.namespace else self.name


class UserMessage(Frozen):
    kind: Literal["user"] = "user"
    text: str


class SystemMessage(Frozen):
    """A system prompt (or a ``developer`` one), sent in place like any other message."""

    kind: Literal["system"] = "system"
    text: str
    role: Literal["system", "developer"] = "system"


class AssistantMessage(Frozen):
    """An assistant turn: text, optional reasoning, and any number of (parallel) tool calls."""

    kind: Literal["assistant"] = "assistant"
    text: str | None = None
    reasoning: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


class ToolResult(Frozen):
    """A tool's output, paired to its call by ``call_id`` (an orphan when no call matches)."""

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    output: str


class ReasoningItem(Frozen):
    """A standalone reasoning item (Responses ``reasoning``; chat folds it into the next turn)."""

    kind: Literal["reasoning"] = "reasoning"
    text: str
    id: str | None = None


class ForeignItem(Frozen):
    """A history entry agentfuzz does not model, kept in the case's own wire form: a past
    call to a hosted tool (``web_search_call``…), a past custom tool call or its output, or
    whatever else a captured request carried. Builders send ``body`` as it is; oracles that
    read calls and results do not see into it."""

    kind: Literal["foreign"] = "foreign"
    body: dict[str, Any]


Item = Annotated[
    UserMessage | SystemMessage | AssistantMessage | ToolResult | ReasoningItem | ForeignItem,
    Field(discriminator="kind"),
]


class History(Frozen):
    """Declared tools and the conversation so far; the server answers the next turn.

    ``foreign_tools`` are declarations that are not functions (a hosted tool, a custom tool),
    in the case's own wire form; they are sent after the functions.
    """

    tools: tuple[Tool, ...] = ()
    items: tuple[Item, ...] = ()
    foreign_tools: tuple[dict[str, Any], ...] = ()

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        turns = (it for it in self.items if isinstance(it, AssistantMessage))
        return tuple(c for it in turns for c in it.tool_calls)

    @property
    def size(self) -> int:
        """Items plus calls: the measure a shrunk repro is judged by."""
        return len(self.items) + len(self.calls)


ToolChoice = Literal["auto", "none", "required"] | str


class Options(Frozen):
    """Request knobs. A ``tool_choice`` that is not auto/none/required names a function.

    ``fields`` are top-level fields of the api's own wire form (``stop``, ``n``,
    ``max_output_tokens``, ``text``…), sent as they are after the knobs: the rest of the
    request surface, which ``agentfuzz.request.surface`` names dimension by dimension. ``forms`` say
    how the messages are spelled (``surface.FORMS``: text as parts, an empty ``content``…).
    ``malformed`` names how the body goes out broken (``surface.MALFORMED``), the history
    being what it was built from.
    """

    include_tools: bool = True
    tool_choice: ToolChoice | None = None
    seed: int | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    fields: dict[str, Any] = Field(default_factory=dict)
    forms: tuple[str, ...] = ()
    malformed: str | None = None


class Provenance(Frozen):
    """Where a session-mode request came from. It never changes the request body; the
    session oracles read it.

    ``untouched``: every assistant message and call id in the history is the server's own
    output, sent back unmodified. ``echoed``: the call ids the previous turn returned, sent
    back unchanged in this request together with their results. ``context``: on a request
    chained onto the session's own last answer (``previous_response_id``), the conversation
    that answer closed, as the client holds it, when the session can vouch it is exactly what
    the server stored (every answer in it taken back whole, no message forms); empty otherwise.
    """

    turn: int
    untouched: bool = True
    echoed: tuple[str, ...] = ()
    context: tuple[Item, ...] = ()


class Case(Frozen):
    """One request to make: a history, the knobs, and which api and stream mode to use.

    ``session`` is set on requests a session sent (see ``Provenance``), None on synthetic ones.
    ``relation`` names the related request the judge sends right after this one
    (``agentfuzz.request.relations``), None for none. Neither changes the request body.
    """

    history: History
    options: Options = Options()
    api: Api = "chat"
    stream: bool = False
    session: Provenance | None = None
    relation: str | None = None
