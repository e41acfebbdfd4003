"""Text from a server, made safe to print on a terminal.

A server's answer reaches the console in error lines, finding messages and the model's name. Its
bytes are the server's to choose: an ANSI escape could recolour, move the cursor, clear the screen
or retitle the window; a NUL or a carriage return could hide the rest of a line. Every control
character, and the Unicode marks that reorder text on screen, is printed as its escape
(``\\x1b``, ``\\x00``, ``\\u202e``), the way Python's ``repr`` writes it, and nothing else
changes: a plain message reads as it did.
"""

from __future__ import annotations

import re

from agentfuzz.model.secrets import mask

__all__ = ["printable"]

# C0 controls and DEL, C1 controls, and the bidirectional overrides and isolates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: object) -> str:
    """``text`` as a string with every control character written as its escape, and every
    secret the run knows masked (a server may echo the key into an error line)."""
    return _UNSAFE.sub(_escape, mask(str(text)))


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
