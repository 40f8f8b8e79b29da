"""Walking every page of the viewer in a real Chromium, as a person clicking through it would, and noting
everything that went wrong on the way: console errors, failed requests, images that did not load, links to
nowhere, fragment links to no element."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

from playwright.sync_api import Page

MAX_PAGES = 400
"""A bound on the walk: the test sites have a few dozen pages."""

# Lazy images far down a page load only when scrolled to: make them eager and wait for every one to decode.
_IMAGES = """async () => {
    const images = [...document.images];
    images.forEach(i => { i.loading = "eager"; });
    await Promise.all(images.map(i => i.decode().catch(() => null)));
    return images.map(i => ({src: i.currentSrc || i.src, ok: i.complete && i.naturalWidth > 0}));
}"""
# Links of SVG drawings too, whose href is not a string: resolved against the page's address by hand.
_LINKS = """() => [...document.querySelectorAll('a[href]')]
    .map(a => new URL(a.getAttribute('href'), document.baseURI).href)"""
_IDS = "() => [...document.querySelectorAll('[id]')].map(e => e.id)"


@dataclass
class Walk:
    """What the walk saw."""

    pages: list[str] = field(default_factory=list)
    """Every HTML page loaded, in order."""
    files: set[str] = field(default_factory=set)
    """Every other link followed (screenshots, plots)."""
    problems: list[str] = field(default_factory=list)


def _is_html(url: str) -> bool:
    return urlsplit(url).path.endswith((".html", "/"))


def _file_exists(url: str) -> bool:
    return Path(unquote(urlsplit(url).path)).is_file()


def walk(page: Page, start: str) -> Walk:
    """Load ``start`` and every page it links to under the same root, checking each; returns what was seen."""
    seen = Walk()
    root = start.rsplit("/", 1)[0] + "/"
    problems: list[str] = seen.problems
    current = {"url": start}
    page.on("console", lambda m: problems.append(f"{current['url']}: console {m.type}: {m.text}")
            if m.type in ("error", "warning") else None)  # fmt: skip
    page.on("pageerror", lambda e: problems.append(f"{current['url']}: script error: {e}"))
    # A request the browser itself abandons (ERR_ABORTED: a page left while an image it no longer needs was still
    # loading) is no failure of the viewer; every image a page shows is checked to decode below.
    page.on("requestfailed", lambda r: problems.append(f"{current['url']}: request failed: {r.url} ({r.failure})")
            if "ERR_ABORTED" not in (r.failure or "") else None)  # fmt: skip
    page.on("response", lambda r: problems.append(f"{current['url']}: {r.status} for {r.url}")
            if r.status >= 400 else None)  # fmt: skip
    queue = [start]
    fragments: list[tuple[str, str, str]] = []
    done: set[str] = set()
    ids: dict[str, set[str]] = {}
    while queue and len(seen.pages) < MAX_PAGES:
        url = queue.pop(0)
        if url in done:
            continue
        done.add(url)
        current["url"] = url
        page.goto(url, wait_until="load")
        seen.pages.append(url)
        # Noted now, so a fragment link to a page already walked needs no second load of it.
        ids[url] = set(page.evaluate(_IDS))
        for image in page.evaluate(_IMAGES):
            if not image["ok"]:
                problems.append(f"{url}: image did not load: {image['src']}")
        for href in page.evaluate(_LINKS):
            target, fragment = urldefrag(href)
            if not target.startswith(root):
                problems.append(f"{url}: link leaves the viewer: {href}")
                continue
            if fragment:
                fragments.append((url, target, fragment))
            if _is_html(target):
                if target not in done:
                    queue.append(target)
            elif target not in seen.files:
                seen.files.add(target)
                ok = _file_exists(target) if target.startswith("file:") else page.request.get(target).status == 200
                if not ok:
                    problems.append(f"{url}: link to nothing: {target}")
    for source, target, fragment in fragments:
        if target not in ids:
            page.goto(target, wait_until="load")
            ids[target] = set(page.evaluate(_IDS))
        if fragment not in ids[target]:
            problems.append(f"{source}: link to #{fragment} on {target}, which has no such element")
    return seen
