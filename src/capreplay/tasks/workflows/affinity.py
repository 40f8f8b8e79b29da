"""CAP's functional affinity between sites, asked once per pair, and the site groups proposals are made for.

CAP rates pairs of site *clusters* (e-commerce, travel, ...), since sites of one cluster share their
functions, and samples a few clusters per round. A snapshot holds a handful of sites, so here every unordered
pair of the cards' sites is rated once, from both cards' functions: ``high`` (people often carry information
from one to the other), ``medium`` (plausible, less common) or ``low`` (no natural flow). Clustering many
sites by a model first is out of scope, so a cards file of more than :data:`MAX_SITES` sites is refused
rather than asked about in n(n-1)/2 calls.

:func:`combinations` is pure and deterministic: every non-low pair, then every connected group of three to
:data:`MAX_GROUP` sites over the non-low pairs. A low pair is never combined, not even inside a group
(a group's proposals may only pass information along non-low pairs, which the prompt shows).
"""

from __future__ import annotations

from itertools import combinations as pairs_of

from capreplay.errors import InputError
from capreplay.llm.messages import ModelRequest
from capreplay.tasks.generation import Affinity, CardsFile, SiteCard
from capreplay.tasks.meter import Meter
from capreplay.tasks.prompts import prompt
from capreplay.tasks.workflows.render import functions_text

MAX_SITES = 12
"""Sites one cards file may have: 66 pairs at most. More need a clustering of sites, which is not done here."""
MAX_GROUP = 5
"""The largest group of connected sites asked for proposals as a whole; larger groups get their pairs only."""
LEVELS = ("high", "medium", "low")


def site_pairs(cards: CardsFile) -> list[tuple[str, str]]:
    """Every unordered pair of the cards' sites, each once, sorted."""
    sites = sorted({card.site for card in cards.cards})
    if len(sites) > MAX_SITES:
        raise InputError(
            f"the cards have {len(sites)} sites; affinity is asked per pair of sites for at most {MAX_SITES} "
            "(group the sites into clusters first)"
        )
    return list(pairs_of(sites, 2))


def affinity_request(first: SiteCard, second: SiteCard) -> ModelRequest:
    """The request rating one pair of sites from their cards' functions."""
    return prompt("affinity").request(
        first=first.site,
        second=second.site,
        first_functions=functions_text(first),
        second_functions=functions_text(second),
    )


def parse_affinity(pair: tuple[str, str], reply: dict[str, object] | str) -> Affinity:
    """The pair's affinity from the model's reply; an unusable reply counts as low, with the reason why.

    Low is the safe reading: a pair nobody rated is not combined, and the file says why.
    """
    if isinstance(reply, str):
        return Affinity(sites=pair, level="low", reason=f"no usable affinity reply: {reply}")
    level = reply.get("level")
    reason = reply.get("reason")
    if not isinstance(level, str) or level.strip().lower() not in LEVELS:
        return Affinity(sites=pair, level="low", reason=f"no usable affinity reply: level {level!r} is not one of "
                        "high, medium, low")  # fmt: skip
    if not isinstance(reason, str) or not reason.strip():
        return Affinity(sites=pair, level="low", reason="no usable affinity reply: it gives no reason")
    return Affinity.model_validate({"sites": pair, "level": level.strip().lower(), "reason": " ".join(reason.split())})


async def assess(cards: CardsFile, meter: Meter) -> list[Affinity]:
    """The affinity of every pair of the cards' sites, one model call per pair, in pair order."""
    found = []
    for pair in site_pairs(cards):
        reply, _ = await meter.ask_json("affinity", affinity_request(cards.card(pair[0]), cards.card(pair[1])))
        found.append(parse_affinity(pair, reply))
    return found


def combinations(affinities: list[Affinity]) -> list[tuple[str, ...]]:
    """The site groups to ask proposals for: non-low pairs, then connected groups of 3 to MAX_GROUP sites.

    Pairs come sorted; groups follow, smaller first, each sorted. A group is a whole connected component of
    the graph whose edges are the non-low pairs.
    """
    linked = sorted(a.sites for a in affinities if a.level != "low")
    neighbours: dict[str, set[str]] = {}
    for first, second in linked:
        neighbours.setdefault(first, set()).add(second)
        neighbours.setdefault(second, set()).add(first)
    groups: list[tuple[str, ...]] = []
    seen: set[str] = set()
    for site in sorted(neighbours):
        if site in seen:
            continue
        component, todo = {site}, [site]
        while todo:
            for other in neighbours[todo.pop()] - component:
                component.add(other)
                todo.append(other)
        seen |= component
        if 3 <= len(component) <= MAX_GROUP:
            groups.append(tuple(sorted(component)))
    return [*linked, *sorted(groups, key=lambda g: (len(g), g))]
