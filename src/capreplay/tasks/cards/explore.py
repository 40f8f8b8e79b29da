"""Site cards by exploration: browser-use's agent browses each site on the replay and writes its card itself.

CAP's other way to a site card (``tasks cards --explore``): instead of one model call per crawled page, one
episode of the browser_use agent per site, through the real harness
(:func:`capreplay.agents.harness.run_agent_episode`) on one replay server, started on the site's crawl seed
(else its root page, else its first page in the manifest) and told by the ``explore`` prompt to finish with
the card as ONE JSON object whose every item names the page it is on. The reply is read per page with the
cards' own reader (:func:`capreplay.tasks.cards.parse.parse_reply`); an item on a page the snapshot does
not hold, or on another site's page, is dropped with the reason, and every other item is checked on its page
freshly loaded in a browser on the same replay (:func:`capreplay.tasks.cards.validate.item_problem`).

The agent brings its own model client, so its calls go through :class:`capreplay.llm.cache_proxy.CachingProxy`
(its ``ANTHROPIC_BASE_URL``), whose upstream is the configured endpoint and whose cache is the stage's
response cache: a re-run makes no model call and writes the same cards file, byte for byte. browser-use puts
two things in its prompts that change from run to run without changing the question, the date and the
browser's random tab ids; :data:`BROWSER_USE_VOLATILE` keeps them out of the cache keys.

The episodes (their records in ``episodes.jsonl`` and a screenshot per step) are kept in a run folder beside
the cards file, for a person to see how the agent got to each item.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import BrowserContext, Error as PlaywrightError

from capreplay.agents.harness import Limits, run_agent_episode
from capreplay.agents.protocol import AgentTask, TaskOutput
from capreplay.agents.run import browser_use_spec
from capreplay.browser.launch import BrowserSettings, open_browser
from capreplay.browser.settle import settle
from capreplay.errors import OutputError, UsageError, os_reason
from capreplay.llm.access import model_key
from capreplay.llm.cache_proxy import CachingProxy, ProxyCall
from capreplay.llm.messages import ModelSettings
from capreplay.llm.reply import json_object
from capreplay.models.episode import EpisodeKey, EpisodeRecord
from capreplay.replay.server import ReplayServer
from capreplay.tasks.cards.build import PageCard, build_cards, cards_file
from capreplay.tasks.cards.parse import LISTS, DraftItem, parse_reply
from capreplay.tasks.cards.validate import item_problem
from capreplay.tasks.generation import CardFunction, CardsFile, DroppedItem, Made, StageCost, slug
from capreplay.tasks.graph import start_page
from capreplay.tasks.prompts import prompt, prompt_hashes
from capreplay.tasks.sites import site_of
from capreplay.tasks.snapshot_pages import SnapshotPage, SnapshotView, open_snapshot
from capreplay.tasks.taxonomy import taxonomy_text
from capreplay.util.files import write_atomic

PROMPT = "explore"
AGENT = "browser_use"
STEP_LIMIT = 25
"""Steps of one site's exploration: enough to open a site's main sections and try their controls."""
EPISODE_TIMEOUT_S = 900.0
DEFAULT_UPSTREAM = "https://api.anthropic.com"
RUN_SUFFIX = ".explore"
"""The run folder of ``cards.json`` is ``cards.json.explore/``."""
BROWSER_USE_VOLATILE = (
    re.compile(r"(?<=Today:)\d{4}-\d{2}-\d{2}"),
    re.compile(r"(?<=Current tab: )[0-9A-Fa-f]{4}\b"),
    re.compile(r"(?<=Tab )[0-9A-Fa-f]{4}(?=: )"),
    re.compile(r"(?<=\[)\d+(?=\]<)"),
)
"""What browser-use's step prompt holds that changes between runs of the same exploration: the day it runs
(``Today:2026-12-02``), the last four hex digits of each tab's CDP target id, which Chromium draws at random
(``Current tab: 1147``, ``Tab 1147: https://...``), and the index of each interactive element (``[210]<a />``),
which is the element's DOM node id in Chromium and so shifts with the nodes any earlier page happened to make.
A cached step that clicks index 210 is replayed as it was; should that index name another element in the
re-run, the next prompt differs and is asked of the upstream like any new question."""


@dataclass(frozen=True)
class SiteStart:
    """One site to explore: where the agent starts, and the snapshot's pages of the site (final URLs, sorted)."""

    site: str
    start_url: str
    pages: tuple[str, ...]

    @property
    def task_id(self) -> str:
        """The episode's task id (its folder in the run)."""
        return f"explore-{slug(self.site)}"


# ---------------------------------------------------------------------------------------------- pure parts


def snapshot_page(view: SnapshotView, url: str) -> SnapshotPage | None:
    """The page that ended at ``url``, else one that was asked for as ``url`` (its final URL is where it is)."""
    return next((p for p in view.pages if p.final_url == url), None) or next(
        (p for p in view.pages if p.url == url), None
    )


def _site_start(view: SnapshotView, site: str, pages: list[SnapshotPage]) -> str:
    """The crawl seed of ``site``, else a root page (path ``/``) of it, else its first page in the manifest."""
    if view.graph is not None:
        seed = start_page(view.graph, pages[0].final_url)
        found = snapshot_page(view, seed) if seed is not None else None
        if found is not None:
            return found.final_url
    root = next((p.final_url for p in pages if urlsplit(p.final_url).path in ("", "/")), None)
    return root or pages[0].final_url


def explore_sites(view: SnapshotView, only: Sequence[str] | None = None) -> list[SiteStart]:
    """The sites to explore, sorted: ``only`` (each a site or a host of it; one not in the snapshot is a
    UsageError), else every site with a page."""
    by_site: dict[str, list[SnapshotPage]] = {}
    for page in view.pages:
        by_site.setdefault(page.site, []).append(page)
    chosen = sorted(by_site)
    if only is not None:
        wanted = {site_of(name.strip().lower()) for name in only}
        unknown = sorted(wanted - set(by_site))
        if unknown:
            raise UsageError(f"--site {unknown[0]}: the snapshot has no page of it (sites: {', '.join(chosen)})")
        chosen = sorted(wanted)
    return [
        SiteStart(site, _site_start(view, site, by_site[site]), tuple(sorted({p.final_url for p in by_site[site]})))
        for site in chosen
    ]


def explore_description(start: SiteStart) -> str:
    """What the agent is told: the prompt's user text (the site, its start and pages, both taxonomies), then its
    instructions. The user text comes first so that the description opens with ``Stage: explore``."""
    explore = prompt(PROMPT)
    user = explore.user.substitute(
        site=start.site,
        start_url=start.start_url,
        pages="\n".join(f"- {url}" for url in start.pages),
        action_types=taxonomy_text("action"),
        perception_types=taxonomy_text("perception"),
    )
    return f"{user}\n\n{explore.system}"


def explore_task(start: SiteStart) -> AgentTask:
    """The agent's task for one site: its one output is the card."""
    card = TaskOutput(name="card", type="json", description="the site card: the one JSON object described above")
    return AgentTask(id=start.task_id, description=explore_description(start), start_url=start.start_url,
                     outputs=[card])  # fmt: skip


@dataclass(frozen=True)
class ExploredReply:
    """One site's reply read: its functions, its items by page (final URL, sorted), and what was dropped."""

    functions: tuple[CardFunction, ...]
    items: Mapping[str, tuple[DraftItem, ...]]
    dropped: tuple[DroppedItem, ...]


def read_explored(answer: str | None, start: SiteStart, view: SnapshotView) -> ExploredReply:
    """The card an exploration answered with (``answer``: the agent's final text), read page by page. Pure.

    The functions are read once; each item then goes to the page its ``url`` names, and is read with that
    page's other items by :func:`parse_reply` (so a code or function problem is the same as in a page's reply).
    An item with no ``url``, or whose URL is no page of the snapshot or a page of another site, is dropped.
    """
    where = start.start_url

    def whole(reason: str) -> ExploredReply:
        return ExploredReply((), {}, (DroppedItem(site=start.site, page=where, item=None, reason=reason),))

    if not answer or not answer.strip():
        return whole("the exploration ended without a card")
    data = json_object(answer)
    head = parse_reply(data if isinstance(data, str) else {"functions": data.get("functions")},
                       site=start.site, page=where)  # fmt: skip
    if isinstance(data, str) or any(d.item is None for d in head.dropped):
        return ExploredReply((), {}, head.dropped)
    dropped = list(head.dropped)
    functions = [f.model_dump(mode="json") for f in head.functions]
    by_page: dict[str, dict[str, list[Any]]] = {}
    for key in LISTS:
        raws = data.get(key, [])
        if not isinstance(raws, list):
            return whole(f"the reply's {key!r} is not a list")
        for raw in raws:
            url = raw.get("url") if isinstance(raw, dict) else None
            page, reason = _item_page(url, start, view)
            if page is None:
                item = raw if isinstance(raw, dict) else {"value": raw}
                dropped.append(DroppedItem(site=start.site, page=url if isinstance(url, str) and url else where,
                                           item=item, reason=reason))  # fmt: skip
                continue
            by_page.setdefault(page, {k: [] for k in LISTS})[key].append(raw)
    items: dict[str, tuple[DraftItem, ...]] = {}
    for page in sorted(by_page):
        reply = parse_reply({"functions": functions, **by_page[page]}, site=start.site, page=page)
        items[page] = reply.items
        dropped.extend(reply.dropped)
    return ExploredReply(head.functions, items, tuple(dropped))


def _item_page(url: Any, start: SiteStart, view: SnapshotView) -> tuple[str | None, str]:
    """The final URL of the snapshot page an item's ``url`` names, or None and why there is none."""
    if not isinstance(url, str) or not url.strip():
        return None, "the item names no page: it has no 'url'"
    page = snapshot_page(view, url.strip())
    if page is None:
        return None, f"{url} is not a page of the snapshot"
    if page.site != start.site:
        return None, f"{url} is a page of {page.site}, not of the explored site {start.site}"
    return page.final_url, ""


def visited_pages(record: EpisodeRecord, start: SiteStart) -> list[str]:
    """The pages of the site the agent's steps were on (final URLs of the snapshot), in the order first reached."""
    seen: dict[str, None] = {start.start_url: None}
    for step in record.steps:
        if step.url in start.pages:
            seen.setdefault(step.url, None)
    return list(seen)


def episode_cost(records: Iterable[EpisodeRecord], calls: Iterable[ProxyCall]) -> StageCost:
    """The cost of the explorations: the agents' calls and tokens as their records report them, and the wall time
    of the upstream calls that answered them (the original calls', for answers from the cache)."""
    records = list(records)
    seconds = sum(c.latency_s for c in calls if c.path.startswith("/v1/messages") and "count_tokens" not in c.path)
    return StageCost(
        calls=sum(r.usage.calls for r in records),
        input_tokens=sum(r.usage.input_tokens for r in records),
        output_tokens=sum(r.usage.output_tokens for r in records),
        seconds=round(seconds, 3),
    )


# ---------------------------------------------------------------------------------------------- I/O


def explore_upstream(settings: ModelSettings) -> str:
    """Where the agent's model calls really go: the settings' endpoint (the command line applied it, see
    :func:`capreplay.cli.options.model_access`), else ``$ANTHROPIC_BASE_URL``, else Anthropic's own."""
    return settings.base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_UPSTREAM


async def _check_page(context: BrowserContext, site: str, url: str,
                      items: Sequence[DraftItem]) -> tuple[list[DraftItem], list[DroppedItem]]:  # fmt: skip
    """The items the page ``url`` bears out, freshly loaded, and the others with why."""
    tab = await context.new_page()
    try:
        try:
            await tab.goto(url, wait_until="load")
        except PlaywrightError as e:
            reason = f"the page does not load offline: {e.message.splitlines()[0]}"
            return [], [DroppedItem(site=site, page=url, item=i.raw, reason=reason) for i in items]
        await settle(tab)
        kept: list[DraftItem] = []
        dropped: list[DroppedItem] = []
        for item in items:
            problem = await item_problem(tab, item.selector)
            if problem is None:
                kept.append(item)
            else:
                dropped.append(DroppedItem(site=site, page=url, item=item.raw, reason=problem))
        return kept, dropped
    finally:
        await tab.close()


async def _site_cards(context: BrowserContext, start: SiteStart, record: EpisodeRecord,
                      view: SnapshotView) -> tuple[list[PageCard], list[DroppedItem]]:  # fmt: skip
    """One explored site's share of the cards: the pages it reached, its functions, its items borne out."""
    reply = read_explored(record.answer, start, view)
    dropped = list(reply.dropped)
    if record.status != "answered":
        # Why the episode ended is why there is no card (or only the one it gave when stopped).
        why = record.error or record.status
        dropped = [d.model_copy(update={"reason": f"{d.reason}: {why}"}) if d.item is None else d for d in dropped]
    kept: dict[str, tuple[DraftItem, ...]] = {}
    for url, items in reply.items.items():
        if items:
            good, lost = await _check_page(context, start.site, url, items)
            kept[url] = tuple(good)
            dropped.extend(lost)
    pages = dict.fromkeys([*visited_pages(record, start), *sorted(reply.items)])
    cards = [PageCard(url, start.site, reply.functions if url == start.start_url else (), kept.get(url, ()))
             for url in pages]  # fmt: skip
    return cards, dropped


async def explore_cards(snapshot: Path, settings: ModelSettings, cache_dir: Path, run_dir: Path, *,
                        sites: Sequence[str] | None = None, upstream: str | None = None, step_limit: int = STEP_LIMIT,
                        timeout_s: float = EPISODE_TIMEOUT_S) -> CardsFile:  # fmt: skip
    """The site cards of ``snapshot`` (``sites``: only these) made by exploring each site with browser-use's agent
    on the replay, its model ``settings``, its calls answered through the response cache in ``cache_dir`` (a miss
    goes to ``upstream``, default :func:`explore_upstream`); the episodes are kept in ``run_dir``.

    Without a model key for the agent (``$CAPREPLAY_AGENT_API_KEY`` or ``$ANTHROPIC_API_KEY``), a UsageError,
    even when the cache holds every answer: browser-use's client refuses to start without one.
    """
    if settings.provider != "anthropic":
        raise UsageError(f"--explore runs browser-use's agent, which speaks Anthropic's API, not {settings.provider}")
    view = open_snapshot(snapshot)
    starts = explore_sites(view, sites)
    run_dir.mkdir(parents=True, exist_ok=True)
    limits = Limits(step_limit, timeout_s)
    records: list[EpisodeRecord] = []
    pages: list[PageCard] = []
    dropped: list[DroppedItem] = []
    async with CachingProxy(upstream or explore_upstream(settings), cache_dir, volatile=BROWSER_USE_VOLATILE) as proxy:
        spec = browser_use_spec(settings, proxy.base_url, model_key("agent", settings.provider, os.environ))
        server = ReplayServer(snapshot, keep_log=True)
        await server.start()
        try:
            for start in starts:
                key = EpisodeKey(repeat=0, task=start.task_id, agent=AGENT)
                records.append(await run_agent_episode(server, key, explore_task(start), spec, limits, run_dir))
            _write_records(run_dir, records)
            info = await server.listen()
            manifest = server.store.manifest
            try:
                async with open_browser(BrowserSettings(info.chromium_args, manifest.frozen_time,
                                                        manifest.random_seed)) as context:  # fmt: skip
                    for start, record in zip(starts, records, strict=True):
                        cards, lost = await _site_cards(context, start, record, view)
                        pages.extend(cards)
                        dropped.extend(lost)
            finally:
                await server.unlisten(info)
        finally:
            await server.stop()
        calls = list(proxy.calls)
    built, unplaced = build_cards(pages, view.sites())
    made = Made(snapshot_id=view.snapshot_id, model=settings.output_settings(), prompts=prompt_hashes(PROMPT),
                cost={"cards": episode_cost(records, calls)})  # fmt: skip
    return cards_file(built, [*dropped, *unplaced], made).model_copy(update={"method": "explore"})


def _write_records(run_dir: Path, records: Sequence[EpisodeRecord]) -> None:
    path = run_dir / "episodes.jsonl"
    try:
        write_atomic(path, "".join(r.model_dump_json() + "\n" for r in records).encode("utf-8"))
    except OSError as e:
        raise OutputError(f"cannot write the exploration's episodes: {os_reason(e)}", path) from e


def explore_run_dir(out: Path) -> Path:
    """The run folder beside the cards file ``out``."""
    return out.with_name(out.name + RUN_SUFFIX)


async def write_explored_cards(snapshot: Path, out: Path, settings: ModelSettings, cache_dir: Path, *,
                               sites: Sequence[str] | None = None) -> CardsFile:  # fmt: skip
    """``tasks cards --explore``: :func:`explore_cards` written to ``out``, the episodes in its run folder."""
    cards = await explore_cards(snapshot, settings, cache_dir, explore_run_dir(out), sites=sites)
    try:
        write_atomic(out, cards.model_dump_json(indent=1).encode("utf-8") + b"\n")
    except OSError as e:
        raise OutputError(f"cannot write the cards file: {os_reason(e)}", out) from e
    return cards
