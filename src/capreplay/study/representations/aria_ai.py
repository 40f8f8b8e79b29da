"""aria_ai: Playwright's ARIA snapshot in AI mode, what Playwright's MCP server gives a model: the whole page,
iframes included, with a ``[ref=eN]`` on every element; an ACT answer names a ref.
"""

from __future__ import annotations

import re

from capreplay.study.page.views import PageViews
from capreplay.study.representations.base import Representation

_REF = re.compile(r"\[ref=([a-z0-9]+)\]")


def render(views: PageViews) -> str:
    """``page.aria_snapshot(mode="ai")`` as read in the page session."""
    return views.aria_ai


def refs_named(snapshot: str, role: str | None, name: str | None) -> list[str]:
    """The refs of the snapshot's lines for ``role`` (and ``name``, when given), in page order."""
    found = []
    for line in snapshot.splitlines():
        match = _REF.search(line)
        if match is None:
            continue
        head = line.strip().removeprefix("- ")
        if role and not head.startswith(role):
            continue
        if name and f'"{name}"' not in head:
            continue
        found.append(match.group(1))
    return found


REPRESENTATION = Representation(name="aria_ai", kind="text", answer_format="aria_ref", render=render,
                                description='page.aria_snapshot(mode="ai"), iframes included, refs per element')
