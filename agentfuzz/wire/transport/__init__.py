"""Transports: the only place that talks to a server. ``live`` uses httpx and httpx-sse."""

from __future__ import annotations

from agentfuzz.wire.transport.live import LiveTransport, ModelListError, TargetUnreachable

__all__ = ["LiveTransport", "ModelListError", "TargetUnreachable"]
