"""Options from a file: ``--config FILE``, else ``./agentfuzz.toml``, else ``[tool.agentfuzz]`` in
``./pyproject.toml``.

Keys are option names (``base-url`` or ``base_url``). A top-level key is offered to every
command that has that option; a table named after a command (``[tool.agentfuzz.fuzz]``, or
``[fuzz]`` in ``agentfuzz.toml``) is that command's alone and wins over the top level. String
values may name environment variables as ``${NAME}``. What the file says becomes click's
``default_map``, so the command line (and an option's own environment variable) wins over it.
Anything wrong (an unreadable file, an unknown key, a value of the wrong type, an unset
variable) is one line and exit 2, naming the file and the key.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any

import click

from agentfuzz.cli._common import fail
from agentfuzz.errors import EXIT_USAGE

__all__ = ["config_defaults", "config_in_force", "found_config"]

_ENV = re.compile(r"\$\{([^}]*)\}")


def found_config(given: Path | None) -> tuple[Path, dict[str, Any]] | None:
    """The config file in force and its agentfuzz table; None when there is none."""
    if given is not None:
        return given, _table(given, given.name == "pyproject.toml", required=True)
    local = Path("agentfuzz.toml")
    if local.is_file():
        return local, _table(local, False, required=True)
    project = Path("pyproject.toml")
    if project.is_file():
        table = _table(project, True, required=False)
        if table:
            return project, table
    return None


def _table(path: Path, pyproject: bool, required: bool) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        fail(EXIT_USAGE, f"--config {path}: cannot read: {exc.strerror or exc}")
    except UnicodeDecodeError as exc:
        fail(EXIT_USAGE, f"{path}: not UTF-8 text: {exc.reason}")
    except tomllib.TOMLDecodeError as exc:
        if not required:  # somebody else's broken pyproject.toml is not ours to refuse
            return {}
        fail(EXIT_USAGE, f"{path}: invalid TOML: {' '.join(str(exc).split())}")
    if not pyproject:
        return data
    # pyproject.toml's ``tool`` is a table by PEP 518; ``tool = 5`` is valid TOML all the same.
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        fail(EXIT_USAGE, f"{path}: [tool] must be a table, not {_kind(tool)}")
    table = tool.get("agentfuzz", {})
    if not isinstance(table, dict):
        fail(EXIT_USAGE, f"{path}: [tool.agentfuzz] must be a table, not {_kind(table)}")
    return table


def _kind(value: Any) -> str:
    """What a TOML value is, in TOML's words: ``an integer``, ``a string``, ``an array``."""
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string"}
    names |= {list: "an array"}
    return names.get(type(value), f"a {type(value).__name__}")


# Options a config file may give that no bundle or log records (they are redacted everywhere).
_SECRET = frozenset({"api_key", "headers"})
_META = "agentfuzz.config_file"


def config_in_force(ctx: click.Context, command: str | None) -> dict[str, Any] | None:
    """What the config file gave ``command``, for its bundles' ``found_by`` (the command line
    alone does not run it again): the file and each option's value, secrets left out."""
    defaults = (ctx.default_map or {}).get(command or "")
    if not defaults:
        return None
    options = {
        k: [str(x) for x in v] if isinstance(v, tuple | list) else v if _plain(v) else str(v)
        for k, v in defaults.items()
        if k not in _SECRET
    }
    return {"file": ctx.meta.get(_META), "options": options}


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def config_defaults(group: click.Group, ctx: click.Context, given: Path | None) -> dict[str, Any]:
    """The ``default_map`` for ``group``'s commands from the config file in force ({} if none)."""
    found = found_config(given)
    if found is None:
        return {}
    path, table = found
    ctx.meta[_META] = str(path)
    commands = {name: group.commands[name] for name in group.commands}
    shared = {k: v for k, v in table.items() if not (k in commands and isinstance(v, dict))}
    known = {_key(o) for c in commands.values() for p in c.params for o in _opts(p)}
    for key in shared:
        if _key(key) not in known:
            fail(EXIT_USAGE, f"{path}: unknown key {key!r} (not an option of any command)")
    defaults: dict[str, Any] = {}
    for name, command in commands.items():
        own = table.get(name, {})
        if not isinstance(own, dict):
            own = {}
        values = _values(path, command, ctx, shared, strict=False)
        values |= _values(path, command, ctx, own, strict=True, table=name)
        if values:
            defaults[name] = values
    return defaults


def _key(name: str) -> str:
    return name.lstrip("-").replace("_", "-")


def _opts(param: click.Parameter) -> list[str]:
    return list(param.opts) if isinstance(param, click.Option) else []


def _values(
    path: Path,
    command: click.Command,
    ctx: click.Context,
    given: dict[str, Any],
    strict: bool,
    table: str = "",
) -> dict[str, Any]:
    """``given`` as ``command``'s default_map: each key's parameter name and checked value;
    ``strict``: a key the command lacks is an error (its own table), else it is not its."""
    by_key = {_key(o): p for p in command.params for o in _opts(p)}
    where = f"[{table}] " if table else ""
    out: dict[str, Any] = {}
    for key, raw in given.items():
        param = by_key.get(_key(key))
        if param is None or param.name is None:
            if strict:
                fail(EXIT_USAGE, f"{path}: {where}unknown key {key!r} (not an option of {table})")
            continue
        value = _substituted(path, key, raw)
        out[param.name] = _checked(path, f"{where}{key}", param, ctx, value)
    return out


def _substituted(path: Path, key: str, value: Any) -> Any:
    """``value`` with every ``${NAME}`` in its strings replaced by that environment variable."""
    if isinstance(value, list):
        return [_substituted(path, key, v) for v in value]
    if not isinstance(value, str):
        return value

    def variable(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            fail(EXIT_USAGE, f"{path}: {key}: ${{{name}}} is not set in the environment")
        return os.environ[name]

    return _ENV.sub(variable, value)


def _checked(path: Path, key: str, param: click.Parameter, ctx: click.Context, value: Any) -> Any:
    """``value`` if ``param`` accepts it (as the command line would), else exit 2."""
    multiple = getattr(param, "multiple", False)
    if isinstance(value, dict) or (isinstance(value, list) and not multiple):
        fail(EXIT_USAGE, f"{path}: {key}: expected a single value, not {type(value).__name__}")
    items = value if isinstance(value, list) else [value]
    is_flag = isinstance(param, click.Option) and param.is_flag
    for item in items:
        if is_flag != isinstance(item, bool) and param.type is not click.BOOL:
            wanted = "true or false" if is_flag else "a value, not true or false"
            fail(EXIT_USAGE, f"{path}: {key}: expected {wanted}, got {item!r}")
        try:
            param.type.convert(item if is_flag else _text(item), param, ctx)
        except click.BadParameter as exc:
            fail(EXIT_USAGE, f"{path}: {key}: {exc.format_message()}")
    return [_text(i) for i in items] if multiple else value if is_flag else _text(value)


def _text(value: Any) -> Any:
    """A TOML value as click converts it from the command line (``true`` stays a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return str(value)
