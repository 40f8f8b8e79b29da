"""Site cards from the crawl's pages: each page loaded on the replay, shown to a model once, its items checked.

The pages are those of the crawl graph when the snapshot has one (the pages a person browsing the site would
reach), else every page of the manifest, one per final URL. Each is loaded offline the way the study loads a
page (:func:`capreplay.study.page.load.open_page_session`); its accessibility tree, its HTML and a screenshot are
read with the study's extractors and sent in one ``card`` call through the :class:`~capreplay.tasks.meter.Meter`
(so a cached client answers a re-run for free). The reply is parsed (:mod:`.parse`) and every item that survives
is checked in the same page load (:mod:`.validate`), the browser kept for all pages, one page after another.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.async_api import BrowserContext

from capreplay.errors import BrowserError, InputError, OutputError, os_reason
from capreplay.llm.client import ModelClient
from capreplay.llm.messages import ModelRequest, ModelSettings
from capreplay.study.page.extract import extract_accessibility_tree, extract_html, extract_screenshot
from capreplay.study.page.load import open_page_session, served_browser
from capreplay.tasks.cards.build import PageCard, build_cards, cards_file
from capreplay.tasks.cards.parse import parse_reply
from capreplay.tasks.cards.validate import item_problem
from capreplay.tasks.generation import CardsFile, DroppedItem, Made
from capreplay.tasks.meter import Meter
from capreplay.tasks.prompts import prompt, prompt_hashes
from capreplay.tasks.sites import site_of_url
from capreplay.tasks.snapshot_pages import SnapshotPage, SnapshotView, open_snapshot
from capreplay.tasks.taxonomy import taxonomy_text
from capreplay.util.files import write_atomic

PROMPT = "card"
ARIA_LIMIT = 16_000
"""Most characters of a page's accessibility tree a prompt carries."""
HTML_LIMIT = 40_000
"""Most characters of a page's HTML a prompt carries (after scripts, styles and comments are left out)."""

_UNSHOWN = re.compile(r"<(script|style|noscript|template)\b[^>]*>.*?</\1\s*>|<!--.*?-->", re.DOTALL | re.IGNORECASE)
_BLANK_LINES = re.compile(r"\n\s*\n+")


@dataclass(frozen=True)
class CardPage:
    """A page to annotate: the URL it is loaded from (the snapshot's final URL) and its captured title."""

    url: str
    title: str

    @property
    def site(self) -> str:
        """Its registrable domain."""
        return site_of_url(self.url)


def _find(view: SnapshotView, url: str) -> SnapshotPage | None:
    """The page that ended at ``url``, else one that was asked for as ``url``."""
    return next((p for p in view.pages if p.final_url == url), None) or next(
        (p for p in view.pages if p.url == url), None
    )


def card_pages(view: SnapshotView, only: Sequence[str] | None = None) -> list[CardPage]:
    """The pages to annotate, one per final URL, sorted: ``only`` (each must be a page of the snapshot), else
    the crawl graph's pages, else the manifest's."""
    if only is not None:
        chosen = []
        for url in only:
            found = _find(view, url)
            if found is None:
                raise InputError(f"{url} is not a page of the snapshot", view.root)
            chosen.append(found)
    elif view.graph is not None:
        chosen = [p for p in (_find(view, g.url) for g in view.graph.pages) if p is not None]
    else:
        chosen = list(view.pages)
    unique: dict[str, CardPage] = {}
    for p in chosen:
        unique.setdefault(p.final_url, CardPage(p.final_url, p.title))
    return [unique[url] for url in sorted(unique)]


def bounded(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters left out]"


def shown_html(html: str) -> str:
    """The page's HTML without what is never drawn (scripts, styles, templates, comments), blank lines folded."""
    return _BLANK_LINES.sub("\n", _UNSHOWN.sub("", html)).strip()


def card_request(page: CardPage, aria: str, html: str, png: bytes) -> ModelRequest:
    """The ``card`` call of one page: its URL, title, accessibility tree and HTML (bounded), both taxonomies,
    and its screenshot."""
    return prompt(PROMPT).request(
        png,
        url=page.url,
        title=page.title,
        action_types=taxonomy_text("action"),
        perception_types=taxonomy_text("perception"),
        aria=bounded(aria, ARIA_LIMIT),
        html=bounded(shown_html(html), HTML_LIMIT),
    )


async def annotate_page(context: BrowserContext, page: CardPage, meter: Meter) -> tuple[PageCard, list[DroppedItem]]:
    """One page's share of its site's card (items the replay bore out) and what was dropped, with why.

    A page that does not load offline is dropped whole; a failed model call (:class:`~capreplay.errors.ModelError`)
    stops the stage, since a re-run answers every call made before it from the cache.
    """
    site = page.site
    try:
        tab = await open_page_session(context, page.url)
    except BrowserError as e:
        return PageCard(page.url, site), [DroppedItem(site=site, page=page.url, item=None, reason=e.message)]
    try:
        aria = await extract_accessibility_tree(tab)
        html = await extract_html(tab)
        png = await extract_screenshot(tab)
        data, _ = await meter.ask_json("cards", card_request(page, aria, html, png))
        reply = parse_reply(data, site=site, page=page.url)
        dropped = list(reply.dropped)
        kept = []
        for item in reply.items:
            problem = await item_problem(tab, item.selector)
            if problem is None:
                kept.append(item)
            else:
                dropped.append(DroppedItem(site=site, page=page.url, item=item.raw, reason=problem))
    finally:
        await tab.close()
    return PageCard(page.url, site, reply.functions, tuple(kept)), dropped


async def make_cards(snapshot: Path, meter: Meter, model: Mapping[str, Any] | None = None, *,
                     pages: Sequence[str] | None = None) -> CardsFile:  # fmt: skip
    """The site cards of ``snapshot`` made page by page (``pages``: only these URLs), every item checked on the
    replay; the same replies give the same file, byte for byte, but for the count of calls the cache answered.

    ``model`` is the model settings the file records (default: the meter's client's settings that change answers).
    """
    view = open_snapshot(snapshot)
    chosen = card_pages(view, pages)
    made_pages: list[PageCard] = []
    dropped: list[DroppedItem] = []
    async with served_browser(snapshot) as (context, _):
        for page in chosen:
            card, lost = await annotate_page(context, page, meter)
            made_pages.append(card)
            dropped.extend(lost)
    cards, unplaced = build_cards(made_pages, view.sites())
    cost = meter.cost()
    made = Made(
        snapshot_id=view.snapshot_id,
        model=dict(model) if model is not None else meter.client.settings.output_settings(),
        prompts=prompt_hashes(PROMPT),
        cost={"cards": cost["cards"]} if "cards" in cost else {},
    )
    return cards_file(cards, [*dropped, *unplaced], made)


async def write_cards(snapshot: Path, out: Path, client: ModelClient, settings: ModelSettings, *,
                      pages: Sequence[str] | None = None) -> CardsFile:  # fmt: skip
    """``tasks cards``: the cards of ``snapshot`` made with ``client`` (``settings`` recorded), written to ``out``.

    The cards the browser_use agent makes by exploring each site: :func:`.explore.write_explored_cards`.
    """
    cards = await make_cards(snapshot, Meter(client), settings.output_settings(), pages=pages)
    text = cards.model_dump_json(indent=1)
    try:
        write_atomic(out, text.encode("utf-8") + b"\n")
    except OSError as e:
        raise OutputError(f"cannot write the cards file: {os_reason(e)}", out) from e
    return cards
