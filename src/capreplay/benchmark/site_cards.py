"""The benchmark's site cards: written by hand, one file per application, each item checked on the replay.

``benchmark/cards/NAME.json`` holds one :class:`~capreplay.tasks.generation.SiteCard` as written from the frozen
pages (no model is reachable to write them), its ``site`` the application's host; ``benchmark/cards.json`` is the
cards file every tool reads (``tasks propose --cards``, ``tasks report --cards``), compiled from them in name
order with method ``hand`` and the snapshot's id. :func:`check_cards` loads each item's page on the replay, as the
model-made cards are checked (:func:`capreplay.tasks.cards.validate.item_problem`), and says which items the
replay does not bear out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from capreplay.archive.snapshot.manifest import load_manifest
from capreplay.errors import BrowserError, InputError
from capreplay.tasks.generation import CardsFile, DroppedItem, ExecutionItem, Made, PerceptionItem, SiteCard
from capreplay.util.files import read_model

CARDS_FOLDER = "cards"
CARDS_FILE = "cards.json"


def _items(card: SiteCard) -> list[ExecutionItem | PerceptionItem]:
    return [*card.execution_items, *card.perception_items]


def card_files(benchmark: Path) -> list[Path]:
    """The card files of the benchmark folder, in name order."""
    return sorted((benchmark / CARDS_FOLDER).glob("*.json"))


def compile_cards(benchmark: Path, snapshot: Path) -> CardsFile:
    """The cards file of every card under ``benchmark/cards``; InputError naming the file of a bad card."""
    paths = card_files(benchmark)
    cards = [read_model(path, SiteCard, invalid="invalid site card") for path in paths]
    if not cards:
        raise InputError(f"no site cards in {CARDS_FOLDER}/*.json", where=benchmark)
    manifest = load_manifest(snapshot)
    pages = {p.final_url for p in manifest.pages}
    seen: set[str] = set()
    for path, card in zip(paths, cards, strict=True):
        if card.site in seen:
            raise InputError(f"a second card of {card.site}", where=path)
        seen.add(card.site)
        for item in _items(card):
            if item.location.url not in pages:
                raise InputError(f"item {item.id}: {item.location.url} is not a page of the snapshot", where=path)
    made = Made(snapshot_id=manifest.snapshot_id, model={}, prompts={})
    return CardsFile(method="hand", made=made, cards=cards)


def cards_json(cards: CardsFile) -> str:
    """The file's text: indented JSON, so a diff shows what a card changed."""
    return json.dumps(cards.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n"


async def check_cards(cards: Sequence[SiteCard], snapshot: Path) -> list[DroppedItem]:
    """Every item of ``cards`` that the replay of ``snapshot`` does not bear out, with why; empty when all hold.

    Each page is loaded once, the way the study loads it, and every item located on it is checked there.
    """
    from capreplay.study.page.load import open_page_session, served_browser
    from capreplay.tasks.cards.validate import item_problem

    by_page: dict[str, list[tuple[str, str, list[str]]]] = {}
    for card in cards:
        for item in _items(card):
            by_page.setdefault(item.location.url, []).append((card.site, item.id, item.location.selector))
    problems: list[DroppedItem] = []
    async with served_browser(snapshot) as (context, _):
        for url, items in by_page.items():
            try:
                tab = await open_page_session(context, url)
            except BrowserError as e:
                problems += [DroppedItem(site=site, page=url, item={"id": i}, reason=e.message) for site, i, _ in items]
                continue
            try:
                for site, item_id, selector in items:
                    problem = await item_problem(tab, selector)
                    if problem is not None:
                        problems.append(DroppedItem(site=site, page=url, item={"id": item_id}, reason=problem))
            finally:
                await tab.close()
    return problems
