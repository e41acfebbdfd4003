"""The embedded reference server: an OpenAI-compatible target that reproduces the seed bugs.

It shares no parsing or assembly code with the client side of agentfuzz (a bug in shared code
would hide itself) and works on raw request JSON. Each behaviour profile switches one real
pipeline (chat template, scripted model, tool parser, output assembly) between a seed's bug
and its fix.
"""

from .behaviours import BEHAVIOURS, Behaviour, UnknownBehaviour
from .pipeline import render_prompt
from .readers import READERS, UnknownReader, reader_named
from .server import create_app, run, serve_in_thread

__all__ = [
    "BEHAVIOURS",
    "READERS",
    "Behaviour",
    "UnknownBehaviour",
    "UnknownReader",
    "create_app",
    "reader_named",
    "render_prompt",
    "run",
    "serve_in_thread",
]
