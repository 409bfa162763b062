"""Bounded YAML loading for files and uploads from strangers (configs, batteries, rosters, rule sets).

``yaml.safe_load`` builds shared objects for aliases, but everything after it (env expansion,
validation, snapshots) walks the data as a tree: a "billion laughs" file of a few hundred bytes
expands to 10^9 nodes there. So the composed node graph is measured *as a tree* before anything
is constructed, and refused beyond the caps below; recursive aliases and very deep nesting are
refused too. Every refusal is a :class:`YamlLimitError` (a ValueError) with a one-line message.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_YAML_BYTES = 1024 * 1024  # a config, battery or roster larger than this is refused
MAX_YAML_ALIASES = 1000  # alias uses (*name) per document
MAX_YAML_NODES = 200_000  # nodes of the document once every alias is expanded
MAX_YAML_DEPTH = 100  # nesting of mappings/sequences


class YamlLimitError(ValueError):
    """The text exceeds a size, alias, expansion or depth limit."""


class _CountingLoader(yaml.SafeLoader):
    """SafeLoader that counts alias uses while composing."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.alias_uses = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self.alias_uses += 1
            if self.alias_uses > MAX_YAML_ALIASES:
                raise YamlLimitError(f"too many YAML aliases (more than {MAX_YAML_ALIASES})")
        return super().compose_node(parent, index)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [x for pair in node.value for x in pair]
    return []


def _check_expansion(root: yaml.Node) -> None:
    """Refuse a node graph whose tree expansion exceeds MAX_YAML_NODES or MAX_YAML_DEPTH, or that
    contains itself. Iterative post-order walk with the expanded size memoized per node."""
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in _children(node))
            if size[key] > MAX_YAML_NODES:
                raise YamlLimitError(f"the document expands to more than {MAX_YAML_NODES} nodes (too many YAML aliases "
                                     "or a YAML alias bomb)")  # fmt: skip
            continue
        if key in size:
            continue
        if key in on_path:
            raise YamlLimitError("a YAML alias refers to a node that contains it (recursive alias)")
        on_path.add(key)
        if len(on_path) > MAX_YAML_DEPTH:
            raise YamlLimitError(f"nested more than {MAX_YAML_DEPTH} levels deep")
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in size)


def load_bounded(text: str) -> Any:
    """``yaml.safe_load(text)`` within the limits above; YAMLError for bad syntax, YamlLimitError otherwise."""
    if len(text) > MAX_YAML_BYTES:
        raise YamlLimitError(f"larger than {MAX_YAML_BYTES // 1024} KiB")
    loader = _CountingLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise YamlLimitError(f"nested more than {MAX_YAML_DEPTH} levels deep") from None
        if node is None:
            return None
        _check_expansion(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def decode_yaml_bytes(data: bytes) -> str:
    """UTF-8 text of an uploaded/read file within the size cap; YamlLimitError / UnicodeDecodeError otherwise."""
    if len(data) > MAX_YAML_BYTES:
        raise YamlLimitError(f"larger than {MAX_YAML_BYTES // 1024} KiB ({len(data)} bytes)")
    return data.decode("utf-8-sig")
