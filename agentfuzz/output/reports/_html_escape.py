"""How every part of ``index.html`` writes a string: escaped, since bodies come from the server
under test, with ids shown as chips of their family."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from agentfuzz.output.reports._ids import ID_IN_TEXT, family, group


def esc(value: object) -> str:
    """``value`` as text, escaped for HTML (quotes included: it may sit in an attribute)."""
    return escape(str(value), quote=True)


def id_chip(value: str, api: object = None) -> str:
    """An id, styled by the family of its shape on ``api``, the family named beside it."""
    name = family(value, api)
    shown = value if value.strip() else repr(value)
    return (
        f'<span class="id g-{group(name)}" title="{esc(name)}"><code>{esc(shown)}</code>'
        f'<span class="fam">{esc(name)}</span></span>'
    )


def marked(value: str, api: object = None) -> str:
    """Free text, escaped, with any id-shaped token in it highlighted (as ids of ``api``)."""
    out, last = [], 0
    for match in ID_IN_TEXT.finditer(value):
        out += [esc(value[last : match.start()]), id_chip(match.group(), api)]
        last = match.end()
    out.append(esc(value[last:]))
    return "".join(out)


def as_json(value: Any) -> str:
    """``value`` as indented JSON; a string as it is."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)
