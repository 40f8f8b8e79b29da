"""Site cards: reading replies, building cards, choosing pages, the prompt; and one run on the world snapshot
with the fake model API, every item checked on the replay."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from capreplay.errors import InputError
from capreplay.llm import TextBlock, make_client
from capreplay.tasks.cards import card_pages, write_cards
from capreplay.tasks.cards.annotate import CardPage, bounded, card_request, shown_html
from capreplay.tasks.cards.build import PageCard, build_cards, cards_file
from capreplay.tasks.cards.parse import DraftItem, ItemKind, PageReply, parse_reply
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
from capreplay.tasks.prompts import prompt
from capreplay.tasks.snapshot_pages import open_snapshot
from capreplay.testing.fake_llm import FakeLLM
from tests.support.llm import anthropic_settings, png_file
from tests.support.paths import ROOT

WORLD = ROOT / "snapshots" / "world"
SHOP = "https://www.fellgear.test/c/tents"
COMPARE = "https://www.trailverdict.test/compare/tents"


@pytest.fixture(autouse=True)
def no_model_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No setting from the environment may send a call anywhere but the fake server."""
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_LOG"):
        monkeypatch.delenv(name, raising=False)


def item(code: str, function: str, selector: Any, **changes: Any) -> dict[str, Any]:
    """An item as a model writes it."""
    return {"component": "Widget", "code": code, "function": function, "description": f"{code} here",
            "selector": selector} | changes  # fmt: skip


F_FILTER = {"id": "F1", "name": "Tent price filtering", "tags": ["[Core]", "Read"], "description": "Filter by price."}
F_SORT = {"id": "F2", "name": "Tent sorting", "tags": ["standard", "read"], "description": "Order the tents."}


# ---------------------------------------------------------------------------------------------- parse


def test_a_reply_keeps_its_valid_entries_and_drops_each_bad_one_with_its_reason() -> None:
    bad_function = {"id": "F3", "name": "", "tags": [], "description": "x"}
    reply: dict[str, Any] = {
        "functions": [F_FILTER, F_SORT, bad_function, {"id": "F2", "name": "Again", "description": "x"}],
        "execution_items": [
            item("AT21", "F1", ["#range"]),
            item("AT99", "F1", ["#a"]),  # no such type
            item("PT07", "F1", ["#b"]),  # a perception type among execution items
            item("AT18", "F9", ["#c"]),  # serves a function the reply does not list
            item("AT18", "F3", ["#d"]),  # serves the function that was dropped
            {"component": "Select", "code": "AT18", "function": "F2", "description": "no selector"},
            item("AT18", "F2", "#sort"),  # a bare string is a one-hop chain
            item("AT21", "F1", ["#range"]),  # the same item again
            "a dropdown",
        ],
        "perception_items": [item("PT07", "F1", ["main", " .badge "], id="P7"), item("PT20", "F1", ["table", ""])],
    }
    parsed = parse_reply(reply, site="fellgear.test", page=SHOP)
    f1 = CardFunction(id="F1", name="Tent price filtering", tags=["core", "read"], description="Filter by price.")
    f2 = CardFunction(id="F2", name="Tent sorting", tags=["standard", "read"], description="Order the tents.")
    assert parsed.functions == (f1, f2)
    assert [(i.kind, i.code, i.function.id, i.selector) for i in parsed.items] == [
        ("execution", "AT21", "F1", ("#range",)),
        ("execution", "AT18", "F2", ("#sort",)),
        ("perception", "PT07", "F1", ("main", ".badge")),
    ]

    def drop(raw: Any, reason: str) -> DroppedItem:
        return DroppedItem(site="fellgear.test", page=SHOP, item=raw if isinstance(raw, dict) else {"value": raw},
                           reason=reason)  # fmt: skip

    ex, pe = reply["execution_items"], reply["perception_items"]
    assert list(parsed.dropped) == [
        drop(bad_function, "function name: String should have at least 1 character"),
        drop(reply["functions"][3], "function id 'F2' is used twice in the reply"),
        drop(ex[1], "code 'AT99' is not a type of CAP's taxonomy"),
        drop(ex[2], "code 'PT07' is a perception type, listed among the execution items"),
        drop(ex[3], "it serves function 'F9', which the reply does not list"),
        drop(ex[4], "it serves function 'F3', which the reply does not list"),
        drop(ex[5], "execution item selector: Field required"),
        drop(ex[7], "it repeats an earlier AT21 item on the same element"),
        drop(ex[8], "execution item: not a JSON object"),
        drop(pe[1], "perception item selector: Value error, a selector of the chain is empty"),
    ]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ("the reply holds no JSON object", "the reply is unusable: the reply holds no JSON object"),
        ({"execution_items": []}, "the reply has no list 'functions'"),
        ({"functions": [], "perception_items": {"P1": {}}}, "the reply's 'perception_items' is not a list"),
    ],
    ids=["no-json", "no-functions", "items-not-a-list"],
)
def test_an_unusable_reply_drops_the_page(data: dict[str, Any] | str, reason: str) -> None:
    parsed = parse_reply(data, site="fellgear.test", page=SHOP)
    assert parsed == PageReply((), (), (DroppedItem(site="fellgear.test", page=SHOP, item=None, reason=reason),))


def test_an_empty_reply_is_a_page_with_nothing_to_record() -> None:
    assert parse_reply({"functions": []}, site="fellgear.test", page=SHOP) == PageReply((), (), ())


# ---------------------------------------------------------------------------------------------- build


def draft(kind: ItemKind, code: str, function: CardFunction, selector: str) -> DraftItem:
    """An item that the replay bore out."""
    return DraftItem(kind, "Widget", code, function, f"{code} at {selector}", (selector,), {"code": code})


def test_pages_of_a_site_make_one_card_with_merged_functions_and_renumbered_ids() -> None:
    # Two pages of the shop number their functions each their own way; "tent price filtering" is one function.
    sort_page = "https://www.fellgear.test/c/tents?sort=price-asc"
    filtering = CardFunction(id="F2", name="Tent price filtering", tags=["core", "read"], description="By price.")
    sorting = CardFunction(id="F1", name="Tent sorting", tags=["read"], description="Order the tents.")
    again = CardFunction(id="F1", name="tent  PRICE filtering", tags=["standard", "read"], description="Other.")
    lonely = CardFunction(id="F2", name="Tent search", tags=[], description="No item serves it.")
    review = CardFunction(id="F1", name="Tent score comparison", tags=["core"], description="Compare scores.")
    pages = [
        PageCard(sort_page, "fellgear.test", (sorting, filtering),
                 (draft("execution", "AT18", sorting, "#sort-select"), draft("perception", "PT07", filtering, ".b"))),
        PageCard(COMPARE, "trailverdict.test", (review,), (draft("perception", "PT20", review, "table#compare"),)),
        PageCard(SHOP, "fellgear.test", (again, lonely), (draft("execution", "AT21", again, "#range"),)),
        PageCard("https://www.fellgear.test/", "fellgear.test"),
    ]  # fmt: skip
    hosts = {"fellgear.test": ["www.fellgear.test"], "trailverdict.test": ["www.trailverdict.test"]}
    cards, unplaced = build_cards(pages, hosts)
    assert unplaced == []

    # Pages in URL order: /, /c/tents (F1 price filtering, F2 search), /c/tents?sort=price-asc (F3 sorting).
    shop_filter = CardFunction(id="F1", name="tent  PRICE filtering", tags=["core", "standard", "read"],
                               description="Other.")  # fmt: skip
    assert cards == [
        SiteCard(
            site="fellgear.test",
            hosts=["www.fellgear.test"],
            pages=["https://www.fellgear.test/", SHOP, sort_page],
            functions=[shop_filter, lonely.model_copy(update={"id": "F2"}), sorting.model_copy(update={"id": "F3"})],
            execution_items=[
                ExecutionItem(id="A1", component="Widget", code="AT21", function="F1", description="AT21 at #range",
                              location=ItemLocation(url=SHOP, selector=["#range"])),
                ExecutionItem(id="A2", component="Widget", code="AT18", function="F3",
                              description="AT18 at #sort-select",
                              location=ItemLocation(url=sort_page, selector=["#sort-select"])),
            ],
            perception_items=[
                PerceptionItem(id="P1", component="Widget", code="PT07", function="F1", description="PT07 at .b",
                               location=ItemLocation(url=sort_page, selector=[".b"])),
            ],
        ),
        SiteCard(
            site="trailverdict.test",
            hosts=["www.trailverdict.test"],
            pages=[COMPARE],
            functions=[review],
            execution_items=[],
            perception_items=[
                PerceptionItem(id="P1", component="Widget", code="PT20", function="F1",
                               description="PT20 at table#compare",
                               location=ItemLocation(url=COMPARE, selector=["table#compare"])),
            ],
        ),
    ]  # fmt: skip
    # The same pages in another order make the same cards.
    assert build_cards(reversed(pages), hosts) == (cards, [])


def test_the_cards_file_lists_drops_by_site_and_page_keeping_each_pages_order() -> None:
    made = Made(snapshot_id="s", model={"model": "m"}, prompts={"card": "0" * 64})
    drops = [DroppedItem(site=s, page=p, item=None, reason=r)
             for s, p, r in [("b.test", "https://b.test/", "first"), ("a.test", "https://a.test/2", "x"),
                             ("b.test", "https://b.test/", "second"), ("a.test", "https://a.test/1", "y")]]  # fmt: skip
    cards = cards_file([], drops, made)
    assert [(d.page, d.reason) for d in cards.dropped] == [
        ("https://a.test/1", "y"),
        ("https://a.test/2", "x"),
        ("https://b.test/", "first"),
        ("https://b.test/", "second"),
    ]
    assert cards.method == "pages" and cards.made == made


# ---------------------------------------------------------------------------------------------- pages and prompt


def test_the_pages_are_the_crawl_graphs_once_each_by_final_url() -> None:
    view = open_snapshot(WORLD)
    pages = card_pages(view)
    assert len(pages) == 40  # graph.json's pages, each captured once as its own final URL
    assert [p.url for p in pages] == sorted({p.url for p in pages})
    assert CardPage("https://www.fellgear.test/c/tents", "Tents · Fellgear") in pages
    assert not any("?min=" in p.url for p in pages)  # a page the capture plan reached by acting is no crawl page


def test_without_a_crawl_graph_the_pages_are_the_manifests_once_each_by_final_url() -> None:
    view = dataclasses.replace(open_snapshot(WORLD), graph=None)
    pages = card_pages(view)
    assert len(pages) == 57  # 74 captures, 57 distinct final URLs
    urls = [p.url for p in pages]
    assert urls.count(SHOP) == 1 and "https://www.fellgear.test/c/tents?min=100&max=250" in urls


def test_given_pages_are_found_by_final_url_first_then_by_the_url_asked_for() -> None:
    view = open_snapshot(WORLD)
    chosen = card_pages(view, [COMPARE, SHOP, SHOP, "https://book.hutnet.test/huts/scarth-refuge/availability"
                                                    "?from=2026-08-14&to=2026-08-16"])  # fmt: skip
    assert chosen == [
        CardPage("https://book.hutnet.test/huts/scarth-refuge/availability?from=2026-08-14&to=2026-08-16",
                 "Scarth Refuge availability · HutNet"),
        CardPage(SHOP, "Tents · Fellgear"),
        CardPage(COMPARE, "Compare tents · TrailVerdict"),
    ]  # fmt: skip
    with pytest.raises(InputError, match=r"https://www\.fellgear\.test/c/stoves is not a page of the snapshot"):
        card_pages(view, ["https://www.fellgear.test/c/stoves"])


def test_the_card_request_names_the_page_and_carries_its_views_and_both_taxonomies() -> None:
    png = png_file(4, 3)
    page = CardPage(SHOP, "Tents · Fellgear")
    html = "<html><head><style>p{}</style><script>x()</script></head>\n\n\n<body><!-- note --><p id=a>Hi</p></body>"
    request = card_request(page, '- slider "Minimum price"', html, png)
    assert request.system == prompt("card").system and "When in doubt, leave it out." in request.system
    text, image = request.content
    assert isinstance(text, TextBlock)
    assert text.text.startswith(f"Stage: card\nPage: {SHOP}\nTitle: Tents · Fellgear\n")
    assert "AT21 Slider: Range Selection (Data Entry)\n" in text.text
    assert "PT56 Canvas: Relation & Layout Understanding (Editor)\n" in text.text
    assert '- slider "Minimum price"\n' in text.text
    assert "<html><head></head>\n<body><p id=a>Hi</p></body>\n" in text.text
    assert image.type == "image"


def test_long_views_are_cut_with_a_note() -> None:
    assert bounded("abcdef", 6) == "abcdef"
    assert bounded("abcdefgh", 5) == "abcde\n[... 3 more characters left out]"
    assert shown_html("<SCRIPT type=x>a\n</script ><p>b</p>\n \n<template><i>c</i></template>") == "<p>b</p>"


# ---------------------------------------------------------------------------------------------- on the replay


SHOP_REPLY: dict[str, Any] = {
    "functions": [F_FILTER, F_SORT],
    "execution_items": [
        item("AT21", "F1", ["[aria-label='Minimum price']"]),
        item("AT18", "F2", ["#sort-select"]),
        item("AT17", "F1", ["#price-form"]),  # the shop has no such form
        item("AT27", "F1", ["article.product-card"]),  # ten cards, not one
    ],
    "perception_items": [
        item("PT07", "F1", ["article[data-slug='corrie-1'] .badge"]),
        item("PT99", "F1", ["span.price"]),
    ],
}
COMPARE_REPLY: dict[str, Any] = {
    "functions": [{"id": "F1", "name": "Tent score comparison", "tags": ["core", "read"], "description": "Scores."}],
    "execution_items": [item("AT33", "F1", ["#compare th[data-col='score'] a"])],
    "perception_items": [
        item("PT20", "F1", ["table#compare"]),
        item("PT22", "F1", ["#compare th[data-col='score'] .arrow"]),  # an empty arrow: no width
        item("PT14", "F1", ["link[rel=icon]"]),  # in <head>: never drawn
    ],
}


def expected_cards() -> tuple[list[SiteCard], list[DroppedItem]]:
    """The cards and drops of the two replies above, written from the two pages' known DOM."""

    def at(url: str, code: str, function: str, selector: str, n: int) -> Any:
        kind = ExecutionItem if code.startswith("AT") else PerceptionItem
        return kind(id=f"{code[0]}{n}", component="Widget", code=code, function=function, description=f"{code} here",
                    location=ItemLocation(url=url, selector=[selector]))  # fmt: skip

    shop = SiteCard(
        site="fellgear.test",
        hosts=["www.fellgear.test"],
        pages=[SHOP],
        functions=[
            CardFunction(id="F1", name="Tent price filtering", tags=["core", "read"], description="Filter by price."),
            CardFunction(id="F2", name="Tent sorting", tags=["standard", "read"], description="Order the tents."),
        ],
        execution_items=[at(SHOP, "AT21", "F1", "[aria-label='Minimum price']", 1),
                         at(SHOP, "AT18", "F2", "#sort-select", 2)],
        perception_items=[at(SHOP, "PT07", "F1", "article[data-slug='corrie-1'] .badge", 1)],
    )  # fmt: skip
    reviews = SiteCard(
        site="trailverdict.test",
        hosts=["www.trailverdict.test"],
        pages=[COMPARE],
        functions=[CardFunction(id="F1", name="Tent score comparison", tags=["core", "read"], description="Scores.")],
        execution_items=[at(COMPARE, "AT33", "F1", "#compare th[data-col='score'] a", 1)],
        perception_items=[at(COMPARE, "PT20", "F1", "table#compare", 1)],
    )

    def drop(site: str, page: str, raw: dict[str, Any], reason: str) -> DroppedItem:
        return DroppedItem(site=site, page=page, item=raw, reason=reason)

    shop_ex, shop_pe = SHOP_REPLY["execution_items"], SHOP_REPLY["perception_items"]
    compare_pe = COMPARE_REPLY["perception_items"]
    dropped = [
        drop("fellgear.test", SHOP, shop_pe[1], "code 'PT99' is not a type of CAP's taxonomy"),
        drop("fellgear.test", SHOP, shop_ex[2], "selector 1 of 1 '#price-form' matched 0 elements, not exactly one"),
        drop("fellgear.test", SHOP, shop_ex[3],
             "selector 1 of 1 'article.product-card' matched 10 elements, not exactly one"),
        drop("trailverdict.test", COMPARE, compare_pe[1],
             "selector chain [\"#compare th[data-col='score'] .arrow\"] matched an element that is not visible "
             "(its box is 0 x 18 px)"),
        drop("trailverdict.test", COMPARE, compare_pe[2],
             "selector chain ['link[rel=icon]'] matched an element that is not rendered (no layout box)"),
    ]  # fmt: skip
    return [shop, reviews], dropped


@pytest.mark.browser
async def test_cards_of_two_world_pages_keep_what_the_replay_bears_out_and_rerun_from_the_cache(
    tmp_path: Path,
) -> None:
    script = {f"Page: {SHOP}\n": json.dumps(SHOP_REPLY), f"Page: {COMPARE}\n": json.dumps(COMPARE_REPLY)}
    async with FakeLLM(script) as fake:
        settings = anthropic_settings(fake.base_url, max_tokens=4000)

        async def run(out: Path) -> CardsFile:
            client = make_client(settings, cache_dir=tmp_path / "llm-cache", api_key="test")
            try:
                return await write_cards(WORLD, out, client, settings, pages=[COMPARE, SHOP])
            finally:
                await client.aclose()

        first = await run(tmp_path / "first.json")
        assert len(fake.received) == 2
        await run(tmp_path / "second.json")
        assert len(fake.received) == 2  # every call answered from the cache: no HTTP

    cards, dropped = expected_cards()
    assert first.cards == cards
    assert first.dropped == dropped
    assert first.made.snapshot_id == json.loads((WORLD / "manifest.json").read_bytes())["snapshot_id"]
    assert first.made.model == {"provider": "anthropic", "model": "claude-test", "max_tokens": 4000,
                                "thinking": {"type": "disabled"}, "temperature": None}  # fmt: skip
    assert first.made.prompts == {"card": prompt("card").sha256}
    cost = first.made.cost["cards"]
    assert cost.calls == 2
    assert CardsFile.model_validate_json((tmp_path / "first.json").read_bytes()) == first
    # Re-run from the cache: the same file to the byte.
    assert (tmp_path / "second.json").read_bytes() == (tmp_path / "first.json").read_bytes()

    shop_call, compare_call = fake.received
    assert shop_call.texts[1].startswith(f"Stage: card\nPage: {SHOP}\nTitle: Tents · Fellgear\n")
    assert '- slider "Minimum price"' in shop_call.texts[1]  # the page's accessibility tree
    assert '<select id="sort-select" name="sort">' in shop_call.texts[1]  # its HTML
    assert "range.js" not in shop_call.texts[1]  # the script tag was left out
    assert len(shop_call.images) == 1 and shop_call.images[0].startswith(b"\x89PNG")
    assert compare_call.texts[1].startswith(f"Stage: card\nPage: {COMPARE}\n")
