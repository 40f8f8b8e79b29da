"""A page's markup as the snapshot archived it, trimmed for a prompt, so a model can write real selectors.

A page's captured text says what the page shows but not where: a gold path's clicks and reads need the
elements' ids, classes and data attributes. The archived HTML gives them. It is looked up through the
replay's own store and matcher, so it is the response the browser will get for that URL, read without a
browser; it is the markup before any script ran, so elements a script adds are not in it (the prompt says
so). :func:`trimmed` is pure.
"""

from __future__ import annotations

import re

from capreplay.archive.warc.http import decode_body
from capreplay.errors import ArchiveError
from capreplay.replay.response import header
from capreplay.replay.store import SnapshotStore

MARKUP_CHARS = 6000
"""Characters of one page's markup a prompt carries; the rest is cut."""

# what a selector never needs: the head, scripts, styles, inline drawings, comments
_UNSHOWN = re.compile(
    r"<(head|script|style|noscript|template|svg)\b[^>]*>.*?</\1\s*>|<!--.*?-->", re.DOTALL | re.IGNORECASE
)
_BLANKS = re.compile(r"\n\s*\n+")


def trimmed(html: str, limit: int = MARKUP_CHARS) -> str:
    """``html`` without its head, scripts, styles, drawings and comments, blank lines closed, cut at ``limit``."""
    text = _BLANKS.sub("\n", _UNSHOWN.sub("", html)).strip()
    return text if len(text) <= limit else text[:limit].rstrip() + "\n[... cut]"


def archived_markup(store: SnapshotStore, url: str, limit: int = MARKUP_CHARS) -> str | None:
    """The trimmed HTML the replay serves for ``GET url``; None when it serves none, or nothing readable as HTML."""
    match = store.matcher.match("GET", url, None)
    if match is None:
        return None
    try:
        out = store.response(match.candidate.ref)  # type: ignore[arg-type]  # the store's candidates carry offsets
    except ArchiveError:
        return None  # an unreadable record shows no markup; the proof finds out what the page does
    if out.status >= 400 or "html" not in (header(out.headers, "content-type") or "").lower():
        return None
    body = decode_body(header(out.headers, "content-encoding"), out.body)
    return None if body is None else trimmed(body.decode("utf-8", "replace"), limit)
