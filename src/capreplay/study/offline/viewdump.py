"""Writing every page's representations to a folder, with their token counts: what ``capreplay study views``
(and ``study selftest -o``) write.

Layout: ``DIR/<page>/<representation>.txt|png``, ``DIR/<page>/indexed_dom.agent_default.audit_only.txt``
(browser-use's text with the agent's default viewport threshold, never shown to a model),
``DIR/<page>/page.json`` (URL, integrity check, truncation flag, timings) and ``DIR/tokens.json``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from capreplay.errors import InputError, os_reason
from capreplay.models.task import StudyPage
from capreplay.study.page.failures import PageFailure
from capreplay.study.page.views import PageViews
from capreplay.study.representations import Representation
from capreplay.study.tokens.view_tokens import ViewTokens, view_tokens
from capreplay.util.files import refuse_unmakeable_folder


def page_record(views: PageViews) -> dict[str, object]:
    """What ``page.json`` holds about one page session."""
    return {
        "url": views.url,
        "browser_use_changed_html": views.browser_use_changed_html,
        "agent_would_truncate": views.indexed_dom.agent_would_truncate,
        "indexed_dom_elements": len(views.indexed_dom.selector_map),
        "timings_ms": {k: round(v, 1) for k, v in views.timings_ms.items()},
        "layouts": {moment: layout.model_dump() for moment, layout in views.layouts.items()},
    }


def write_page(
    folder: Path, page: str, views: PageViews, representations: Sequence[Representation]
) -> list[ViewTokens]:
    """Write one page's representations into ``folder`` and return their token counts."""
    folder.mkdir(parents=True, exist_ok=True)
    counts = []
    for representation in representations:
        rendered = representation.render(views)
        path = folder / f"{representation.name}.{representation.extension}"
        if isinstance(rendered, bytes):
            path.write_bytes(rendered)
        else:
            path.write_text(rendered, encoding="utf-8")
        counts.append(view_tokens(page, representation, rendered))
    if views.indexed_dom.agent_default is not None:
        (folder / "indexed_dom.agent_default.audit_only.txt").write_text(views.indexed_dom.agent_default,
                                                                         encoding="utf-8")
    (folder / "page.json").write_text(json.dumps(page_record(views), indent=2) + "\n", encoding="utf-8")
    return counts


class ViewsFolder:
    """The output folder of the views, filled a page at a time.

    Each page is written into a hidden folder first and renamed into place when whole, so a page whose
    session fails leaves nothing; an output folder this writer made and no page filled is removed again.
    """

    def __init__(self, out: Path, pages: Sequence[StudyPage]) -> None:
        """Refuse, before any browser starts, page ids that cannot be folder names and an ``out`` that cannot
        be made."""
        for page in pages:
            if page.id in (".", "..") or "/" in page.id or "\\" in page.id or page.id.startswith("."):
                raise InputError(f"page id {page.id!r} cannot be a folder name")
        refuse_unmakeable_folder(out)
        self.out = out
        self.made = not out.exists()

    def create(self) -> None:
        """Make the folder (once the snapshot is known to be good, so bad input writes nothing)."""
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InputError(f"cannot create the output folder: {os_reason(e)}", self.out) from e

    @contextmanager
    def staged(self, page: str) -> Iterator[Path]:
        """The hidden folder to write ``page`` into; renamed to ``DIR/<page>`` if the block ends normally."""
        staging = self.out / f".{page}.partial"
        try:
            yield staging
            shutil.rmtree(self.out / page, ignore_errors=True)
            staging.rename(self.out / page)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def finish(self, counts: Sequence[ViewTokens], failures: Sequence[PageFailure]) -> None:
        """Write ``tokens.json``, or remove the folder if this writer made it and no page was written."""
        if not counts and self.made:
            self.out.rmdir()
            return
        (self.out / "tokens.json").write_text(
            json.dumps({"encoding": "o200k_base", "image_tier": "standard",
                        "rows": [c.model_dump(mode="json") for c in counts],
                        "failed_pages": [f.model_dump() for f in failures]}, indent=2) + "\n",
            encoding="utf-8",
        )  # fmt: skip
