"""Review sheets in the viewer: each sheet's page, its text and the proof run's screenshots, and the route that
writes a decision back to the sheet's file.

A sheet is listed at ``sheets/<name>/``: ``index.html`` (:mod:`capreplay.view.sheet_page`), ``sheet.txt`` (the
file as it is now) and ``proof-run/...`` (the screenshots the sheet links to, served from the batch folder).
The page is made from the file each time it is asked for, so it always shows the decisions the file holds.
The site entry of ``sheet.txt`` is a :class:`SheetSource`, which is how the decision route knows the file: a
POST names a sheet the site lists, never a path (:mod:`capreplay.view.sheet_decide`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from aiohttp import web

from capreplay.errors import CapreplayError
from capreplay.tasks.review.batch_folder import PROOF_RUN, ReviewBatch, read_evidence
from capreplay.tasks.review.parse import MARKER, ReviewedSheet
from capreplay.tasks.review.sheet import SHEET_NAME
from capreplay.view.app import VIEWER
from capreplay.view.contents import Contents, Listed, add_snapshot, safe
from capreplay.view.html import esc, page
from capreplay.view.sheet_file import Outcome, decision_of, read_bytes, read_reviewed, sha256, write_decision
from capreplay.view.sheet_page import Pending, SheetView, decided_summary, render_sheet_page
from capreplay.view.site import Site

SHEET_GLOB = "*.md"
"""Files under the results folder that may be review sheets; those whose first line is not the marker are not."""
SECTION = "sheets"
PAGE = "index.html"
SOURCE = "sheet.txt"
"""The sheet's text in the site: plain text, which a browser shows rather than downloads."""


def is_sheet(path: Path) -> bool:
    """Whether ``path``'s first line is the review sheet's marker."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            return f.readline().strip() == MARKER
    except (OSError, UnicodeDecodeError):
        return False


@dataclass(frozen=True)
class SheetSource:
    """A sheet the site lists: its file, and its page made with a refused decision shown (or none).

    It is the body of the site's ``sheet.txt`` entry, so the site itself says which files may be written.
    """

    file: Path
    render: Callable[[Pending | None], str]

    def __call__(self) -> bytes:
        """The sheet's text as it is now."""
        return read_bytes(self.file)


def sources(site: Site) -> Iterator[tuple[str, SheetSource]]:
    """Every sheet the site lists, with its name (``sheets/<name>/``)."""
    for path in site.paths():
        entry = site.get(path)
        if path.startswith(f"{SECTION}/") and entry is not None and isinstance(entry.body, SheetSource):
            yield path.split("/")[1], entry.body


def source(site: Site, name: str) -> SheetSource | None:
    """The sheet listed as ``name``, or None: the only way a request reaches a file."""
    entry = site.get(f"{SECTION}/{name}/{SOURCE}")
    return entry.body if entry is not None and isinstance(entry.body, SheetSource) else None


def _name(site: Site, batch: str, path: Path) -> str:
    """The sheet's site name: its batch's, with the file's stem unless it is the default name, made unique."""
    stem = safe(batch) if path.name == SHEET_NAME else f"{safe(batch)}-{safe(path.stem)}"
    taken = {name for name, _ in sources(site)}
    # one more candidate than there are sheets: one of them is free
    return next(n for n in (stem, *(f"{stem}-{i}" for i in range(2, len(taken) + 3))) if n not in taken)


def _snapshot(contents: Contents, batch: ReviewBatch) -> str | None:
    """The page of the snapshot the batch was proven on, added to the site if it is not there yet."""
    folder = batch.tasks_file.snapshot_path(batch.workflows.snapshot, batch.tasks_path).resolve()
    try:
        add_snapshot(contents, folder)
    except CapreplayError as e:
        contents.broken("Snapshots", str(folder), e)
    return contents.snapshots.get(batch.snapshot_id)


def _screenshots(contents: Contents, base: str, reviewed: ReviewedSheet) -> dict[str, str]:
    """The proof run's screenshots added to the site under ``base/proof-run/``: their site paths by run path."""
    evidence = read_evidence(reviewed.batch)
    run = reviewed.batch.folder / PROOF_RUN
    shots: dict[str, str] = {}
    for record in evidence.episodes.values():
        for step in record.steps:
            shot = step.screenshot
            # a path that climbs out of the run, or is not one clean path, is not served
            if shot and shot not in evidence.missing_shots and posixpath.normpath(shot) == shot \
                    and not shot.startswith(("/", "..")):  # fmt: skip
                shots[shot] = f"{base}/{PROOF_RUN}/{shot}"
                contents.site.file(shots[shot], run / shot)
    return shots


def add_sheet(contents: Contents, path: Path) -> None:
    """The sheet's page, text and screenshots, and its line on the front page (a file that is not a review
    sheet is passed over; a sheet that does not read, or no longer matches its batch, is an InputError)."""
    if not is_sheet(path):
        return
    resolved = path.resolve()
    if any(s.file.resolve() == resolved for _, s in sources(contents.site)):
        return
    reviewed = read_reviewed(read_bytes(path), path)
    name = _name(contents.site, reviewed.sheet.batch, path)
    base = f"{SECTION}/{name}"
    here = f"{base}/{PAGE}"
    shots = _screenshots(contents, base, reviewed)
    snapshot = _snapshot(contents, reviewed.batch)

    def render(pending: Pending | None) -> str:
        try:
            data = read_bytes(path)
            now = read_reviewed(data, path)
            evidence = read_evidence(now.batch)
        except CapreplayError as e:
            # the file changed into something that does not read: say so where the sheet was
            return page(here, f"Review sheet {path.name}", f'<p class="banner error">{esc(e.line())}</p><p>Fix the '
                        "file (or write the sheet again), then reload this page.</p>")  # fmt: skip
        view = SheetView(here, path, sha256(data), now, evidence, shots.get, f"{base}/{SOURCE}", snapshot, pending)
        return render_sheet_page(view)

    contents.site.page(here, lambda: render(None))
    contents.site.data(f"{base}/{SOURCE}", SheetSource(path, render))
    contents.listed.append(Listed("Review sheets", str(path), here,
                                  [esc(reviewed.sheet.batch), decided_summary(reviewed.sheet)]))  # fmt: skip


async def _decide(request: web.Request) -> web.StreamResponse:
    listed = source(request.app[VIEWER].site, request.match_info["name"])
    if listed is None:
        raise web.HTTPNotFound(text=f"capreplay view lists no review sheet {request.match_info['name']!r}\n")
    # a page of another site may post a form here (a browser sends it with its Origin): only the viewer's own may
    origin = request.headers.get("Origin")
    if origin is not None and origin != f"{request.scheme}://{request.host}":
        raise web.HTTPForbidden(text="decisions are taken only from the viewer's own pages\n")
    form = await request.post()
    fields = {name: [v for v in form.getall(name, []) if isinstance(v, str)] for name in form}
    decision = decision_of(fields)
    outcome = write_decision(listed.file, decision) if not isinstance(decision, str) else Outcome(400, decision)
    task = fields.get("task", [""])[0]
    if "application/json" in request.headers.get("Accept", ""):
        return web.json_response(outcome.payload(task), status=outcome.status, headers={"Cache-Control": "no-store"})
    if outcome.reviewed is not None:
        raise web.HTTPSeeOther(f"{PAGE}#decision-{quote(task)}")
    first = {name: values[0] if values else "" for name, values in fields.items()}
    pending = Pending(task=task, verdict=first.get("verdict", ""), reason=first.get("reason", ""),
                      reviewer=first.get("reviewer", ""), message=outcome.message)  # fmt: skip
    return web.Response(status=outcome.status, text=listed.render(pending), content_type="text/html",
                        charset="utf-8", headers={"Cache-Control": "no-store"})  # fmt: skip


def decide_route() -> web.RouteDef:
    """``POST /sheets/<name>/decide``: a decision written into the sheet the site lists as ``name``.

    A form posted by a page answers with a redirect to the page (or, refused, with the page and the reason at
    the task); a script that asks for JSON (``Accept: application/json``) gets :meth:`Outcome.payload`.
    """
    return web.post(f"/{SECTION}/{{name}}/decide", _decide)
