"""A safe YAML loader that builds cassette documents faster than PyYAML's own constructor.

libyaml parses in C, but PyYAML then builds every node through a Python dispatcher that tracks
recursion and defers mappings through generators: most of a cassette's load time. ``SafeLoader``
builds mappings, lists and plain scalars directly and hands any other document back whole to
the safe constructor, so the result (and every error) is the same as ``yaml.CSafeLoader``'s.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["SafeLoader"]

_TAG = "tag:yaml.org,2002:"
_STR = _TAG + "str"
# Scalars whose safe constructor is a plain function of the node (no state, no generators).
_SCALARS = frozenset(
    _TAG + t for t in ("str", "null", "bool", "int", "float", "binary", "timestamp")
)


class _Unusual(Exception):
    """A node the short path leaves to PyYAML: merge keys, sets, unknown tags, recursion."""


class SafeLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader, building plain documents without PyYAML's generic constructor."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        wild = self.yaml_implicit_resolvers.get(None, [])
        self._implicit = {
            first: (*found, *wild)
            for first, found in self.yaml_implicit_resolvers.items()
            if first is not None
        }
        self._wild = tuple(wild)

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: tuple[bool, bool]) -> Any:
        # libyaml calls this for every node: PyYAML's version concatenates two lists per call.
        if self.yaml_path_resolvers:
            return super().resolve(kind, value, implicit)
        if kind is yaml.ScalarNode:
            if implicit[0]:
                for tag, pattern in self._implicit.get(value[:1], self._wild):
                    if pattern.match(value):
                        return tag
            return self.DEFAULT_SCALAR_TAG
        return self.DEFAULT_SEQUENCE_TAG if kind is yaml.SequenceNode else self.DEFAULT_MAPPING_TAG

    def construct_document(self, node: yaml.Node) -> Any:
        try:
            return self._build(node, {})
        except _Unusual:
            return super().construct_document(node)

    def _build(self, node: yaml.Node, built: dict[int, Any]) -> Any:
        tag = node.tag
        if type(node) is yaml.ScalarNode:
            if tag == _STR:
                return node.value
            if tag not in _SCALARS:
                raise _Unusual
            return self.yaml_constructors[tag](self, node)
        # An alias is the same node met again: it gets the same object, as PyYAML gives it.
        done = built.get(id(node), built)
        if done is not built:
            if done is _Unusual:  # met again while being built: recursive
                raise _Unusual
            return done
        built[id(node)] = _Unusual
        out: Any
        build = self._build
        if tag == _TAG + "map" and type(node) is yaml.MappingNode:
            out = {}
            for key, value in node.value:
                if type(key) is not yaml.ScalarNode or key.tag not in _SCALARS:
                    raise _Unusual  # merge ("<<") and value ("=") keys, or unhashable ones
                # Most values are strings: taken here, without a call each.
                out[build(key, built)] = (
                    value.value
                    if value.tag == _STR and type(value) is yaml.ScalarNode
                    else build(value, built)
                )
        elif tag == _TAG + "seq" and type(node) is yaml.SequenceNode:
            out = [build(item, built) for item in node.value]
        else:
            raise _Unusual
        built[id(node)] = out
        return out
