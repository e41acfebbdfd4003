"""The Responses stream state machine: typed events in, text, calls and item sightings out.

Text, reasoning and calls come from the streamed events (a client renders them as they
arrive); the terminal ``response`` only contributes its status and its item identities, so
the ``identity`` oracle can compare what was streamed with what was finally reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from agentfuzz.model.observation import ItemSighting, ObservedCall
from agentfuzz.wire.dialects._wire import Faults, as_dict, as_list, as_str

__all__ = ["StreamState", "reasoning_of_item", "text_of_message"]

_TERMINAL = ("response.completed", "response.incomplete", "response.failed")


def text_of_message(item: dict[str, Any]) -> str:
    """The ``output_text`` of a message item, parts joined."""
    parts = (as_dict(p) for p in as_list(item.get("content")))
    return "".join(as_str(p.get("text")) or "" for p in parts if p.get("type") == "output_text")


def reasoning_of_item(item: dict[str, Any]) -> str:
    """A reasoning item's summary and content text, in that order."""
    parts = [as_dict(p) for p in as_list(item.get("summary")) + as_list(item.get("content"))]
    return "".join(as_str(p.get("text")) or "" for p in parts)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass
class _Call:
    id: str | None = None
    call_id: str | None = None
    name: str | None = None
    namespace: str | None = None
    arguments: str = ""

    def fill(self, item: dict[str, Any]) -> None:
        """Take identity fields not yet known from ``item`` (the first sighting wins)."""
        self.id = self.id if self.id is not None else as_str(item.get("id"))
        self.call_id = self.call_id if self.call_id is not None else as_str(item.get("call_id"))
        self.name = self.name if self.name is not None else as_str(item.get("name"))
        if self.namespace is None:
            self.namespace = as_str(item.get("namespace"))


class StreamState:
    """Running snapshot of one Responses stream, fed one parsed event at a time."""

    def __init__(self, faults: Faults) -> None:
        self._faults = faults
        # Keyed by (output_index, part kind, part index): a delta appends, a .done replaces.
        self._text: dict[tuple[object, ...], str] = {}
        self._reasoning: dict[tuple[object, ...], str] = {}
        self._calls: dict[int | None, _Call] = {}
        self.sightings: list[ItemSighting] = []
        self.status: str | None = None
        self.response_id: str | None = None
        self.terminal = False

    def feed(self, event: str | None, payload: dict[str, Any]) -> None:
        kind = as_str(payload.get("type")) or event or ""
        oi = _int(payload.get("output_index"))
        if kind == "response.output_item.added":
            self._item(payload, oi, "added")
        elif kind == "response.output_item.done":
            self._item(payload, oi, "done")
        elif kind == "response.output_text.delta":
            self._append(self._text, (oi, "text", payload.get("content_index")), payload, "delta")
        elif kind == "response.output_text.done":
            self._replace(self._text, (oi, "text", payload.get("content_index")), payload)
        elif kind in ("response.reasoning_text.delta", "response.reasoning_summary_text.delta"):
            self._append(self._reasoning, _reasoning_key(kind, oi, payload), payload, "delta")
        elif kind in ("response.reasoning_text.done", "response.reasoning_summary_text.done"):
            self._replace(self._reasoning, _reasoning_key(kind, oi, payload), payload)
        elif kind == "response.function_call_arguments.delta":
            call = self._call(oi, payload)
            call.arguments += as_str(payload.get("delta")) or ""
        elif kind == "response.function_call_arguments.done":
            call = self._call(oi, payload)
            call.arguments = as_str(payload.get("arguments")) or call.arguments
            call.name = call.name if call.name is not None else as_str(payload.get("name"))
        elif kind in _TERMINAL:
            self._terminal(kind, as_dict(payload.get("response")))
        elif kind in ("response.created", "response.in_progress"):
            response = as_dict(payload.get("response"))
            self.status = as_str(response.get("status")) or self.status
            self.response_id = as_str(response.get("id")) or self.response_id

    def _call(self, oi: int | None, payload: dict[str, Any]) -> _Call:
        call = self._calls.setdefault(oi, _Call())
        if call.id is None:
            call.id = as_str(payload.get("item_id"))
        return call

    def _item(
        self, payload: dict[str, Any], oi: int | None, phase: Literal["added", "done"]
    ) -> None:
        item = as_dict(payload.get("item"))
        self._sight(phase, oi, item)
        if item.get("type") != "function_call":
            return
        call = self._calls.setdefault(oi, _Call())
        call.fill(item)
        arguments = as_str(item.get("arguments"))
        # ``added`` usually carries "" and ``done`` the final string; neither erases deltas.
        if arguments and (phase == "done" or not call.arguments):
            call.arguments = arguments

    def _sight(
        self, phase: Literal["added", "done", "completed"], oi: int | None, item: Any
    ) -> None:
        item = as_dict(item)
        self.sightings.append(
            ItemSighting(
                phase=phase,
                output_index=-1 if oi is None else oi,
                type=as_str(item.get("type")) or "",
                id=as_str(item.get("id")),
                call_id=as_str(item.get("call_id")),
            )
        )

    def _terminal(self, kind: str, response: dict[str, Any]) -> None:
        self.terminal = True
        self.status = as_str(response.get("status")) or self.status
        self.response_id = as_str(response.get("id")) or self.response_id
        for position, item in enumerate(as_list(response.get("output"))):
            self._sight("completed", position, item)
        if kind == "response.failed" or self.status == "failed":
            self._faults.add("response_failed", f"{kind}: {response.get('error')}")

    @staticmethod
    def _append(
        parts: dict[tuple[object, ...], str],
        key: tuple[object, ...],
        payload: dict[str, Any],
        field: str,
    ) -> None:
        parts[key] = parts.get(key, "") + (as_str(payload.get(field)) or "")

    @staticmethod
    def _replace(
        parts: dict[tuple[object, ...], str], key: tuple[object, ...], payload: dict[str, Any]
    ) -> None:
        text = as_str(payload.get("text"))
        if text is not None:
            parts[key] = text

    def text(self) -> str:
        return "".join(self._text.values())

    def reasoning(self) -> str:
        return "".join(self._reasoning.values())

    def calls(self) -> tuple[ObservedCall, ...]:
        ordered = sorted(self._calls.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))
        return tuple(
            ObservedCall(
                index=oi,
                id=c.id,
                name=c.name,
                arguments=c.arguments,
                call_id=c.call_id,
                namespace=c.namespace,
            )
            for oi, c in ordered
        )


def _reasoning_key(kind: str, oi: int | None, payload: dict[str, Any]) -> tuple[object, ...]:
    if "summary" in kind:
        return (oi, "summary", payload.get("summary_index"))
    return (oi, "content", payload.get("content_index"))
