"""Tool-call arguments written from a declared JSON schema: required properties, right types."""

from __future__ import annotations

import random
from typing import Any

__all__ = ["sample_arguments"]

_WORDS = ("Paris", "report.txt", "alpha", "main", "Adelaide, Australia", "42")
_MAX_DEPTH = 6


def sample_arguments(schema: Any, rng: random.Random) -> dict[str, Any]:
    """An object that satisfies ``schema``'s type, required, enum, const and bound keywords.

    A top-level schema that is not an object schema gets ``{}``: arguments are always an object.
    """
    if not isinstance(schema, dict):
        return {}
    value = _value(_resolved(schema, schema, 0), rng, 0)
    return value if isinstance(value, dict) else {}


def _resolved(schema: Any, root: dict[str, Any], depth: int) -> Any:
    """``schema`` with every local ``#/$defs/…`` reference replaced by what it names."""
    if depth > _MAX_DEPTH:
        return {}
    if isinstance(schema, list):
        return [_resolved(s, root, depth + 1) for s in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        defs = root.get("$defs")
        target = defs.get(ref[len("#/$defs/") :]) if isinstance(defs, dict) else None
        return _resolved(target if isinstance(target, dict) else {}, root, depth + 1)
    return {k: _resolved(v, root, depth + 1) for k, v in schema.items()}


def _first_type(schema: dict[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        non_null = [k for k in kind if k != "null"]
        return non_null[0] if non_null else "null"
    if isinstance(kind, str):
        return kind
    if "properties" in schema or "required" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return None


def _value(schema: Any, rng: random.Random, depth: int) -> Any:
    if not isinstance(schema, dict):
        return "value"
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            return _value(branches[0], rng, depth + 1)
    if isinstance(schema.get("allOf"), list):
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            if isinstance(part, dict):
                merged.setdefault("properties", {}).update(part.get("properties") or {})
                merged["required"] = [*merged.get("required", []), *(part.get("required") or [])]
                merged.setdefault("type", part.get("type"))
        return _value(merged, rng, depth + 1)
    kind = _first_type(schema)
    if kind == "object":
        return _object(schema, rng, depth)
    if kind == "array":
        return _array(schema, rng, depth)
    if kind in ("integer", "number"):
        return _number(schema, rng, kind == "integer")
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    return _string(schema, rng)


def _object(schema: dict[str, Any], rng: random.Random, depth: int) -> dict[str, Any]:
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required = schema.get("required")
    names = [n for n in required if isinstance(n, str)] if isinstance(required, list) else []
    minimum = schema.get("minProperties")
    if isinstance(minimum, int):
        names += [n for n in props if n not in names][: max(0, minimum - len(names))]
    if depth >= _MAX_DEPTH:
        return {n: None for n in names}
    return {n: _value(props.get(n, {}), rng, depth + 1) for n in dict.fromkeys(names)}


def _array(schema: dict[str, Any], rng: random.Random, depth: int) -> list[Any]:
    low = schema.get("minItems")
    count = low if isinstance(low, int) and low > 0 else 0
    if depth >= _MAX_DEPTH or count == 0:
        return []
    items: list[Any] = []
    for _ in range(count * 4):
        value = _value(schema.get("items", {}), rng, depth + 1)
        if not schema.get("uniqueItems") or value not in items:
            items.append(value)
        if len(items) == count:
            break
    return items


def _number(schema: dict[str, Any], rng: random.Random, integer: bool) -> int | float:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    low = low if isinstance(low, int | float) and not isinstance(low, bool) else None
    high = high if isinstance(high, int | float) and not isinstance(high, bool) else None
    if low is None:
        low = min(1, high - 1) if high is not None else 1
    if high is None:
        high = low + 10
    if integer:
        lo, hi = int(low) + 1, int(high) - 1
        if lo > hi:
            lo, hi = int(low), int(high)
        step = schema.get("multipleOf")
        value = rng.randint(lo, hi) if lo <= hi else int(low)
        if isinstance(step, int) and step > 0:
            value = (value // step) * step
            if value < low:
                value += step
        return value
    return (low + high) / 2


def _string(schema: dict[str, Any], rng: random.Random) -> str:
    text = rng.choice(_WORDS)
    low, high = schema.get("minLength"), schema.get("maxLength")
    if isinstance(low, int) and len(text) < low:
        text = text + "x" * (low - len(text))
    if isinstance(high, int) and len(text) > high:
        text = text[: max(high, 0)]
    return text
