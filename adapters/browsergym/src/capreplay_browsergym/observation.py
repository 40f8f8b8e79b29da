"""An observation's DOM as HTML that keeps the page's own text: BrowserGym's ``dom_object`` written out node by node.

BrowserGym's ``flatten_dom_to_str`` writes the same nodes, but prettified: every text node on a line of its own,
indented, so ``x_for=1`` written in three spans reads ``x_for = 1`` and a gold path's pattern no longer matches
what the page shows. This writes the nodes as they are (text escaped, every marked element with its ``bid``),
iframes' documents inside their frame elements, and leaves out what a person never reads as text: comments,
doctypes and pseudo-elements (``::before``, ``::marker``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from html import escape
from typing import Any

from browsergym.core.constants import BROWSERGYM_SETOFMARKS_ATTRIBUTE, BROWSERGYM_VISIBILITY_ATTRIBUTE

_ELEMENT, _TEXT = 1, 3
_INTERNAL = {BROWSERGYM_VISIBILITY_ATTRIBUTE, BROWSERGYM_SETOFMARKS_ATTRIBUTE}
"""BrowserGym's own marks, which its flattening leaves out too; its ``bid`` is kept."""
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                   "wbr"})  # fmt: skip


def dom_html(dom: Mapping[str, Any]) -> str:
    """The HTML of the observation's DOM snapshot (``obs["dom_object"]``), the top document's."""
    strings: list[str] = dom["strings"]

    def text(index: int) -> str | None:
        return None if index == -1 else strings[index]

    def document(number: int) -> str:
        nodes = dom["documents"][number]["nodes"]
        children: defaultdict[int, list[int]] = defaultdict(list)
        for node, parent in enumerate(nodes["parentIndex"]):
            if parent != -1:
                children[parent].append(node)
        frames = dict(zip(nodes["contentDocumentIndex"]["index"], nodes["contentDocumentIndex"]["value"], strict=True))

        def write(node: int) -> str:
            kind, name = nodes["nodeType"][node], (text(nodes["nodeName"][node]) or "").lower()
            inner = "".join(write(child) for child in children[node])
            if node in frames:
                inner = document(frames[node]) + inner
            if kind == _TEXT:
                return escape(text(nodes["nodeValue"][node]) or "", quote=False)
            if kind != _ELEMENT:
                return inner  # the document itself and fragments; comments and doctypes have no children
            if name.startswith("::"):
                return ""
            pairs = nodes["attributes"][node]
            attributes = "".join(
                f' {text(pairs[i])}="{escape(text(pairs[i + 1]) or "")}"' for i in range(0, len(pairs), 2)
                if text(pairs[i]) not in _INTERNAL
            )  # fmt: skip
            return f"<{name}{attributes}>" if name in _VOID else f"<{name}{attributes}>{inner}</{name}>"

        return write(0)

    return document(0)
