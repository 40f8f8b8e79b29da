"""accessibility_tree: Playwright's ARIA snapshot of ``<body>``, default mode.

Default mode shows an iframe as a bare ``- iframe`` node, and no mode shows closed shadow roots.
"""

from __future__ import annotations

import json
import re

from capreplay.study.page.views import PageViews
from capreplay.study.representations.base import Representation

# One node line without its "- ": a role, a JSON-quoted name, then attributes ("[level=1]") or ":".
_NODE = re.compile(r'(?P<role>[a-z][a-z-]*)(?: (?P<name>"(?:[^"\\]|\\.)*"))?(?=$| \[|:)')
# YAML quotes a key that needs it in single quotes, doubling any quote inside.
_QUOTED_KEY = re.compile(r"'((?:[^']|'')*)'")


def render(views: PageViews) -> str:
    """The ARIA snapshot as read from the page."""
    return views.accessibility_tree


def parse_node(line: str) -> tuple[str, str] | None:
    """The role and accessible name of one line of an ARIA snapshot (name "" when it shows none).

    None for a line that is not a node (``- /url: ...``, a child text). A role-less text line parses as
    role ``text``: it names no element a role locator can find.
    """
    body = line.strip()
    if not body.startswith("- "):
        return None
    body = body[2:]
    quoted = _QUOTED_KEY.match(body)
    if quoted:
        body = quoted.group(1).replace("''", "'")
    node = _NODE.match(body)
    if node is None:
        return None
    name = node.group("name")
    return node.group("role"), json.loads(name) if name else ""


def node_lines(snapshot: str) -> set[str]:
    """Every line of a snapshot without its indentation, to look a node up in."""
    return {line.strip() for line in snapshot.splitlines()}


REPRESENTATION = Representation(name="accessibility_tree", kind="text", answer_format="role_name", render=render,
                                description='page.locator("body").aria_snapshot(), default mode')
