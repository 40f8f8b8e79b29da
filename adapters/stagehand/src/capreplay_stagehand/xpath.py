"""Stagehand's XPath form, rebuilt from a CDP DOM tree: the rules of its bundled runtime, not XPath in general.

Stagehand's snapshot (``domMapsForSession`` in the extension's ``service-worker.js``) names every node by
positional steps from its frame's document: ``tag[n]`` counted among siblings of the same node type and name
(``text()[n]``, ``comment()[n]``; a doctype counts as ``html``), ``//`` for a hop into a shadow root (closed
ones too), and a frame's nodes follow its ``iframe`` element's own XPath. The functions here are the same
rules (``buildChildXPathSegments``, ``joinXPath``, ``trimTrailingTextNode``), so the XPath of an element found
by CSS can be compared with ``xpath_map`` as Stagehand's act would compare it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

Json = dict[str, Any]
SHADOW_HOP = "//"
_TEXT = 3
_COMMENT = 8
_TRAILING_TEXT = re.compile(r"/text\(\)(\[\d+\])?$", re.IGNORECASE)


def child_segments(children: list[Json]) -> list[str]:
    """Each child's step, as ``buildChildXPathSegments`` counts them."""
    counts: dict[str, int] = {}
    steps = []
    for child in children:
        tag = str(child.get("nodeName", "")).lower()
        key = f"{child.get('nodeType')}:{tag}"
        counts[key] = index = counts.get(key, 0) + 1
        if child.get("nodeType") == _TEXT:
            steps.append(f"text()[{index}]")
        elif child.get("nodeType") == _COMMENT:
            steps.append(f"comment()[{index}]")
        else:
            steps.append(f"*[name()='{tag}'][{index}]" if ":" in tag else f"{tag}[{index}]")
    return steps


def join_xpath(base: str, step: str) -> str:
    """``joinXPath``: one step (or a shadow hop) appended to an XPath."""
    if step == SHADOW_HOP:
        if not base or base == "/":
            return SHADOW_HOP
        return f"{base}/" if base.endswith("/") else f"{base}{SHADOW_HOP}"
    if not base or base == "/":
        return f"/{step}" if step else "/"
    if base.endswith(SHADOW_HOP):
        return f"{base}{step}"
    return f"{base}/{step}" if step else base


def trim_trailing_text_node(xpath: str) -> str:
    """``trimTrailingTextNode``: act's selector for a text node is its element's."""
    return _TRAILING_TEXT.sub("", xpath)


@dataclass(frozen=True)
class Edge:
    """How a node hangs from its parent in the tree: a child with its step, or a shadow root."""

    parent: int
    step: str


class DomTree:
    """One ``DOM.getDocument(depth=-1, pierce=true)`` tree, indexed by node id, with each node's way up.

    A same-process iframe's document is reached through ``contentDocument``, which adds no step: the frame's
    nodes continue the ``iframe`` element's XPath, as Stagehand's prefixing does.
    """

    def __init__(self, root: Json) -> None:
        self.root = root
        self.nodes: dict[int, Json] = {}
        self.edges: dict[int, Edge] = {}
        for node, edge in self._walk(root):
            self.nodes[node["nodeId"]] = node
            if edge is not None:
                self.edges[node["nodeId"]] = edge

    @staticmethod
    def _walk(root: Json) -> Iterator[tuple[Json, Edge | None]]:
        stack: list[tuple[Json, Edge | None]] = [(root, None)]
        while stack:
            node, edge = stack.pop()
            yield node, edge
            children = node.get("children") or []
            for child, step in zip(children, child_segments(children), strict=True):
                stack.append((child, Edge(node["nodeId"], step)))
            for shadow in node.get("shadowRoots") or []:
                stack.append((shadow, Edge(node["nodeId"], SHADOW_HOP)))
            if "contentDocument" in node:
                stack.append((node["contentDocument"], Edge(node["nodeId"], "")))

    def steps_between(self, scope: int, node: int) -> list[str]:
        """The steps from ``scope`` (a document or shadow root) down to ``node``, which it must hold."""
        steps: list[str] = []
        while node != scope:
            edge = self.edges.get(node)
            if edge is None:
                raise ValueError(f"node {node} is not inside node {scope}")
            steps.append(edge.step)
            node = edge.parent
        return steps[::-1]


def extend(base: str, steps: list[str]) -> str:
    """``base`` followed by ``steps``; a frame's document (an empty step) adds nothing."""
    for step in steps:
        if step:
            base = join_xpath(base, step)
    return base
