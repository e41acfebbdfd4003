"""The modes a run fuzzes (an api, streamed or not), and how a mode is named, said once:
``chat/stream`` on screen and in the summary, ``chat-stream`` in file names."""

from __future__ import annotations

from typing import Literal

from agentfuzz.model.history import Api

__all__ = ["ALL_MODES", "Kind", "Mode", "label", "slug"]

Mode = tuple[Api, bool]
ALL_MODES: tuple[Mode, ...] = (
    ("chat", False),
    ("chat", True),
    ("responses", False),
    ("responses", True),
)


def label(mode: Mode) -> str:
    """How a mode is named in progress and in the summary: ``chat/stream``."""
    api, stream = mode
    return f"{api}/{'stream' if stream else 'no-stream'}"


def slug(mode: Mode) -> str:
    """How a mode is named in file names: ``chat-stream``."""
    api, stream = mode
    return f"{api}-{'stream' if stream else 'no-stream'}"


# What an example is: one generated request, or a whole session driven by the server's answers.
Kind = Literal["synthetic", "session"]
