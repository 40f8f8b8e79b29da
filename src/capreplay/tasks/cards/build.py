"""Site cards from the pages' replies: functions merged per site, ids renumbered, items located. Pure.

Each page's reply numbers its own functions; a site's card joins them: functions of the same name (letter case
and spacing aside) are one function, with the tags of all and the description first written. Ids are then given
afresh, in the order of the pages' URLs and, within a page, of the reply: F1, F2, ... for functions, A1, ... and
P1, ... for execution and perception items, each item's function reference following its function. The same
replies therefore always make the same cards, byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from capreplay.tasks.cards.parse import DraftItem
from capreplay.tasks.generation import (
    CardFunction,
    CardsFile,
    DroppedItem,
    ExecutionItem,
    ItemLocation,
    Made,
    PerceptionItem,
    SiteCard,
)

MAX_IDS = 999
"""The largest number an id of a card may carry (F999, A999, P999)."""
_TAG_ORDER = ("core", "standard", "read", "write")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class PageCard:
    """What one page gave its site's card: the functions its reply listed and the items the replay bore out."""

    url: str
    site: str
    functions: tuple[CardFunction, ...] = ()
    items: tuple[DraftItem, ...] = ()


def function_key(name: str) -> str:
    """The name two functions share when they are one function."""
    return _SPACE.sub(" ", name).strip().casefold()


@dataclass
class _Site:
    """A card being built."""

    site: str
    pages: list[str] = field(default_factory=list)
    functions: dict[str, CardFunction] = field(default_factory=dict)
    """By function key, in the order first seen."""
    execution: list[ExecutionItem] = field(default_factory=list)
    perception: list[PerceptionItem] = field(default_factory=list)

    def function_id(self, function: CardFunction) -> str:
        """The card's id of ``function``, which joins the card (or merges into one of its name) if need be."""
        key = function_key(function.name)
        have = self.functions.get(key)
        if have is None:
            self.functions[key] = function.model_copy(update={"id": f"F{len(self.functions) + 1}"})
            return self.functions[key].id
        tags = set(have.tags) | set(function.tags)
        self.functions[key] = have.model_copy(update={"tags": [t for t in _TAG_ORDER if t in tags]})
        return have.id

    def add(self, page: str, item: DraftItem) -> DroppedItem | None:
        """Put ``item`` of ``page`` on the card; why not, if the card has no id left for it."""
        count = len(self.execution if item.kind == "execution" else self.perception)
        new_function = function_key(item.function.name) not in self.functions
        if count >= MAX_IDS or (new_function and len(self.functions) >= MAX_IDS):
            reason = f"the card of {self.site} has no id left (at most {MAX_IDS} of a kind)"
            return DroppedItem(site=self.site, page=page, item=item.raw, reason=reason)
        function = self.function_id(item.function)
        location = ItemLocation(url=page, selector=list(item.selector))
        if item.kind == "execution":
            self.execution.append(ExecutionItem(id=f"A{count + 1}", component=item.component, code=item.code,
                                                function=function, description=item.description,
                                                location=location))  # fmt: skip
        else:
            self.perception.append(PerceptionItem(id=f"P{count + 1}", component=item.component, code=item.code,
                                                  function=function, description=item.description,
                                                  location=location))  # fmt: skip
        return None

    def card(self, hosts: list[str]) -> SiteCard:
        """The finished card."""
        return SiteCard(
            site=self.site,
            hosts=hosts,
            pages=self.pages,
            functions=list(self.functions.values()),
            execution_items=self.execution,
            perception_items=self.perception,
        )


def build_cards(pages: Iterable[PageCard], hosts: Mapping[str, list[str]]) -> tuple[list[SiteCard], list[DroppedItem]]:
    """One card per site of ``pages`` (sites sorted), and the items no card had room for.

    ``hosts`` lists the snapshot's hosts by site; a site missing from it has the hosts of its pages' URLs.
    """
    sites: dict[str, _Site] = {}
    dropped: list[DroppedItem] = []
    for page in sorted(pages, key=lambda p: p.url):
        building = sites.setdefault(page.site, _Site(page.site))
        building.pages.append(page.url)
        for function in page.functions:
            if len(building.functions) < MAX_IDS or function_key(function.name) in building.functions:
                building.function_id(function)
        for item in page.items:
            problem = building.add(page.url, item)
            if problem is not None:
                dropped.append(problem)
    cards = []
    for site in sorted(sites):
        own = hosts.get(site) or sorted({urlsplit(u).hostname or "" for u in sites[site].pages})
        cards.append(sites[site].card(list(own)))
    return cards, dropped


def cards_file(cards: list[SiteCard], dropped: Iterable[DroppedItem], made: Made) -> CardsFile:
    """``cards.json`` of the pages method, its dropped items in page order (the order they were found in)."""
    ordered = sorted(dropped, key=lambda d: (d.site, d.page))  # stable: a page keeps its reply's order
    return CardsFile(method="pages", made=made, cards=cards, dropped=ordered)
