"""Writing every page's representations to a folder, with their token counts: what
``capreplay study views`` does.

Layout: ``DIR/<page>/<representation>.txt|png``, ``DIR/<page>/indexed_dom.agent_default.audit_only.txt``
(browser-use's text with the agent's default viewport threshold, never shown to a model),
``DIR/<page>/page.json`` (URL, integrity check, truncation flag, timings) and ``DIR/tokens.json``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from capreplay.errors import InputError, os_reason
from capreplay.study.page.failures import PageFailure, PageFailures
from capreplay.study.page.session import page_session, study_browser
from capreplay.study.page.views import PageViews
from capreplay.study.representations import REPRESENTATIONS, Representation, uses_stagehand
from capreplay.study.run.tasks import StudyTasks
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


class ViewsDump(BaseModel):
    """What ``study views`` wrote: every page's token counts, and the pages that could not be read."""

    counts: list[ViewTokens]
    failures: list[PageFailure]


async def dump_views(snapshot: Path, tasks: StudyTasks, out: Path,
                     representations: Sequence[Representation] | None = None) -> ViewsDump:
    """One page session per page of ``tasks`` on the served ``snapshot``; every representation written to ``out``.

    Each page is written into a hidden folder first and renamed into place when whole, so a page whose
    session fails leaves nothing; the other pages go on. An output folder this call made and no page
    filled is removed again.
    """
    chosen = list(representations or REPRESENTATIONS.values())
    for page in tasks.pages:
        # Page ids become folder names.
        if page.id in (".", "..") or "/" in page.id or "\\" in page.id or page.id.startswith("."):
            raise InputError(f"page id {page.id!r} cannot be a folder name")
    refuse_unmakeable_folder(out)  # before a browser starts
    counts: list[ViewTokens] = []
    failed = PageFailures()
    made = not out.exists()
    async with study_browser(snapshot, stagehand=uses_stagehand(chosen)) as (context, adapter):
        # Created once the snapshot is known to be good, so bad input writes nothing.
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InputError(f"cannot create the output folder: {os_reason(e)}", out) from e
        for page in tasks.pages:
            staging = out / f".{page.id}.partial"
            async with failed.guard(page.id, page.url):
                try:
                    async with page_session(context, adapter, page.url, [], audit=True,
                                            settle_ms=page.settle_ms) as session:
                        written = write_page(staging, page.id, session.views, chosen)
                    shutil.rmtree(out / page.id, ignore_errors=True)
                    staging.rename(out / page.id)
                    counts += written
                finally:
                    shutil.rmtree(staging, ignore_errors=True)
    if counts or not made:
        (out / "tokens.json").write_text(
            json.dumps({"encoding": "o200k_base", "image_tier": "standard",
                        "rows": [c.model_dump(mode="json") for c in counts],
                        "failed_pages": [f.model_dump() for f in failed.failures]}, indent=2) + "\n",
            encoding="utf-8",
        )  # fmt: skip
    else:
        out.rmdir()
    return ViewsDump(counts=counts, failures=failed.failures)
