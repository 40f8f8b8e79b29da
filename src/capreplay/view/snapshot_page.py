"""A snapshot's page: its id and provenance, hosts with record counts, the crawl graph, every page with its
capture screenshot, and the last verify report. Pure: what was read in, HTML out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from capreplay.archive.index.cdxj import IndexEntry
from capreplay.models.manifest import Manifest
from capreplay.tasks.graph import SiteGraph
from capreplay.view.graph_svg import graph_svg
from capreplay.view.html import badge, definitions, esc, page, rel, table


@dataclass(frozen=True)
class SnapshotView:
    """Everything the snapshot's page shows, read from its folder."""

    folder: str
    path: str
    """The page's site path (``snapshots/<id>/index.html``)."""
    manifest: Manifest
    entries: Sequence[IndexEntry]
    graph: SiteGraph | None
    captures: dict[str, str]
    """Each page's capture screenshot as a site path, by the page's position in the manifest."""
    verify: dict[str, Any] | None
    """The last ``verify --json`` report of this snapshot, if one was kept."""


def page_anchor(n: int) -> str:
    """The anchor of the ``n``-th page's row."""
    return f"page-{n}"


def _hosts(view: SnapshotView) -> str:
    counts = Counter(urlsplit(e.url).hostname or "?" for e in view.entries)
    statuses: dict[str, Counter[str]] = {}
    for e in view.entries:
        statuses.setdefault(urlsplit(e.url).hostname or "?", Counter())[str(e.status or "revisit")] += 1
    rows = [[esc(host), str(counts.get(host, 0)),
             esc(", ".join(f"{s}: {n}" for s, n in sorted(statuses.get(host, Counter()).items())))]
            for host in view.manifest.hosts]  # fmt: skip
    return table(["host", "records", "by status"], rows)


def _pages(view: SnapshotView) -> str:
    rows = []
    for n, p in enumerate(view.manifest.pages):
        shot = view.captures.get(str(n))
        src = esc(rel(view.path, shot)) if shot else ""
        thumb = (f'<a href="{src}"><img class=thumb loading=lazy src="{src}" alt="capture of {esc(p.final_url)}"></a>'
                 if shot else badge("no screenshot", "muted"))  # fmt: skip
        final = "" if p.final_url == p.url else f'<div class=small>→ {esc(p.final_url)}</div>'
        status = badge(str(p.status), "ok" if p.status and p.status < 400 else "bad")
        rows.append([f'<span id="{page_anchor(n)}">{n}</span>', f"{esc(p.url)}{final}", esc(p.title), status,
                     str(p.depth), thumb])
    return table(["#", "URL", "title", "status", "depth", "capture"], rows, cls="pages")


def _verify(view: SnapshotView) -> str:
    report = view.verify
    if report is None:
        return ("<p class=muted>No verify report kept for this snapshot yet: run "
                f"<code>capreplay verify {esc(view.folder)}</code>.</p>")  # fmt: skip
    rows = []
    for p in report.get("pages", []):
        results = Counter(r.get("result") for r in p.get("requests", []))
        misses = [r for r in p.get("requests", []) if r.get("result") in ("miss", "blocked")]
        missed = "".join(
            f'<li>{badge(r.get("result", "?"), "bad" if r.get("archived") else "warn")} {esc(r.get("url"))}'
            + (f' <span class=small>nearest: {esc(r["nearest"])}</span>' if r.get("nearest") else "") + "</li>"
            for r in misses
        )
        fidelity = p.get("fidelity") or {}
        same = ("pixels same" if fidelity.get("pixel_identical") else "pixels differ") if fidelity else "–"
        rows.append([esc(p.get("url")), badge(str(p.get("status")), "ok" if p.get("status") == "ok" else "bad"),
                     esc(", ".join(f"{k} {v}" for k, v in sorted(results.items()))), esc(same),
                     f"<ul class=plain>{missed}</ul>" if missed else ""])
    when = esc(report.get("verified_at", "?"))
    head = (f"<p>Verified {when}: {esc(report.get('misses', 0))} misses, "
            f"{esc(report.get('archived_misses', 0))} of them archived.</p>")  # fmt: skip
    return head + table(["page", "status", "requests", "fidelity", "missed or blocked"], rows)


def render_snapshot(view: SnapshotView) -> str:
    """The snapshot's page."""
    m = view.manifest
    anchors = {p.url: f"#{page_anchor(n)}" for n, p in enumerate(m.pages)}
    anchors.update({p.final_url: f"#{page_anchor(n)}" for n, p in enumerate(m.pages) if p.final_url not in anchors})
    facts = definitions([
        ("snapshot id", f"<code>{esc(m.snapshot_id)}</code>"),
        ("folder", f"<code>{esc(view.folder)}</code>"),
        ("created", esc(m.created.isoformat())),
        ("complete", badge("yes", "ok") if m.complete else badge("no: the capture stopped early", "bad")),
        ("frozen time", esc(m.frozen_time.isoformat())),
        ("browser", esc(m.browser.get("version", m.browser.get("name", "?")))),
        ("records", str(len(view.entries))),
        ("files", f"{len(m.files)} ({sum(f.size for f in m.files):,} bytes)"),
        ("imported from", esc(", ".join(s.name for s in m.imported_from)) if m.imported_from else "capreplay capture"),
    ])  # fmt: skip
    graph = (f"<h2>Crawl graph</h2><div class=scroll>{graph_svg(view.graph, anchors)}</div>"
             if view.graph else "<h2>Crawl graph</h2><p class=muted>No crawl graph (graph.json) in this snapshot.</p>")
    body = (facts + "<h2>Hosts</h2>" + _hosts(view) + graph + f"<h2>Pages ({len(m.pages)})</h2>" + _pages(view)
            + "<h2>Last verify report</h2>" + _verify(view))
    return page(view.path, f"Snapshot {m.snapshot_id[:16]}", body)
