"""Site cards by exploration: browser-use's agent on the replayed world, its calls through the caching proxy.

The fast tests read scripted card answers against the world snapshot's pages (no browser); the one browser
test runs the real adapter process on one site with the fake Messages API answering browser-use's
``AgentOutput`` tool calls, then runs again from the cache alone.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from capreplay.cli import main
from capreplay.errors import UsageError
from capreplay.llm.cache_proxy import proxy_key
from capreplay.tasks.cards.explore import (
    BROWSER_USE_VOLATILE,
    SiteStart,
    explore_sites,
    explore_task,
    read_explored,
    write_explored_cards,
)
from capreplay.tasks.generation import CardFunction, DroppedItem, ExecutionItem, ItemLocation, PerceptionItem
from capreplay.tasks.snapshot_pages import open_snapshot
from capreplay.testing.fake_llm import FakeLLM, Received, Reply
from tests.support.llm import anthropic_settings
from tests.support.paths import ROOT

WORLD = ROOT / "snapshots" / "world"
HOME = "https://www.fellgear.test/"
TENTS = "https://www.fellgear.test/c/tents"
STOVES = "https://www.fellgear.test/c/stoves"  # the shop sells no stoves: no such page
REVIEWS = "https://www.trailverdict.test/reviews"
KEY = "sk-ant-explore-test-0123456789"
START = SiteStart("fellgear.test", HOME, (HOME, TENTS))

F_FILTER = {"id": "F1", "name": "Tent price filtering", "tags": ["core", "read"], "description": "Narrow tents."}
F_SORT = {"id": "F2", "name": "Tent sorting", "tags": ["standard", "read"], "description": "Order the tents."}
MIN_PRICE = {"component": "Slider", "code": "AT21", "function": "F1", "description": "Minimum price.",
             "url": TENTS, "selector": ["[aria-label='Minimum price']"]}  # fmt: skip
NO_FORM = {"component": "Form", "code": "AT17", "function": "F1", "description": "A price form.",
           "url": TENTS, "selector": ["#price-form"]}  # fmt: skip
ON_STOVES = {"component": "Select", "code": "AT18", "function": "F2", "description": "Sort stoves.",
             "url": STOVES, "selector": ["#sort-select"]}  # fmt: skip
NO_URL = {"component": "Select", "code": "AT18", "function": "F2", "description": "Sort.", "selector": ["#sort-select"]}
BADGE = {"component": "Badge", "code": "PT07", "function": "F1", "description": "Corrie 1's badge.",
         "url": TENTS, "selector": ["article[data-slug='corrie-1'] .badge"]}  # fmt: skip
ELSEWHERE = {"component": "List", "code": "PT18", "function": "F1", "description": "Reviews.",
             "url": REVIEWS, "selector": ["main"]}  # fmt: skip
CARD: dict[str, Any] = {
    "functions": [F_FILTER, F_SORT],
    "execution_items": [MIN_PRICE, NO_FORM, ON_STOVES, NO_URL],
    "perception_items": [BADGE, ELSEWHERE],
}


def drop(page: str, item: dict[str, Any] | None, reason: str) -> DroppedItem:
    return DroppedItem(site="fellgear.test", page=page, item=item, reason=reason)


@pytest.fixture(autouse=True)
def agent_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent's key, and no setting from the environment that could send a call anywhere but the fake."""
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY", "CAPREPLAY_AGENT_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CAPREPLAY_AGENT_API_KEY", KEY)


# ---------------------------------------------------------------------------------------------- no browser


def test_each_site_starts_at_its_crawl_seed_else_its_root_page() -> None:
    starts = explore_sites(open_snapshot(WORLD))
    assert [(s.site, s.start_url) for s in starts] == [
        ("fellgear.test", HOME),  # no seed of the crawl: the root page
        ("hutnet.test", "https://book.hutnet.test/"),
        ("parkstats.test", "https://data.parkstats.test/"),
        ("trailverdict.test", "https://www.trailverdict.test/"),
    ]
    (shop,) = explore_sites(open_snapshot(WORLD), ["www.fellgear.test"])  # a host names its site
    assert shop.site == "fellgear.test" and REVIEWS not in shop.pages
    assert TENTS in shop.pages and "https://www.fellgear.test/c/tents?min=100&max=250" in shop.pages
    with pytest.raises(UsageError, match=r"--site stoves\.test: the snapshot has no page of it"):
        explore_sites(open_snapshot(WORLD), ["stoves.test"])


def test_the_agent_is_told_the_site_its_pages_and_to_answer_with_one_json_object() -> None:
    task = explore_task(START)
    assert task.id == "explore-fellgear-test" and task.start_url == HOME
    assert task.description.startswith(f"Stage: explore\nSite: fellgear.test\nStart page: {HOME}\n")
    assert f"- {HOME}\n- {TENTS}\n" in task.description
    assert "AT21 Slider: Range Selection (Data Entry)\n" in task.description
    assert "ONE JSON object" in task.description and '"url": "https://www.example.test/' in task.description
    assert [o.name for o in task.outputs] == ["card"]


def test_an_answer_is_read_page_by_page_and_items_off_the_site_are_dropped() -> None:
    answer = "card: " + json.dumps(CARD) + f" (source: {TENTS})"  # the adapter's output form around the object
    reply = read_explored(answer, START, open_snapshot(WORLD))
    assert [f.name for f in reply.functions] == ["Tent price filtering", "Tent sorting"]
    assert {url: [i.code for i in items] for url, items in reply.items.items()} == {TENTS: ["AT21", "AT17", "PT07"]}
    assert list(reply.dropped) == [
        drop(STOVES, ON_STOVES, f"{STOVES} is not a page of the snapshot"),
        drop(HOME, NO_URL, "the item names no page: it has no 'url'"),
        drop(REVIEWS, ELSEWHERE, f"{REVIEWS} is a page of trailverdict.test, not of the explored site fellgear.test"),
    ]


def test_a_page_asked_for_by_a_url_that_redirected_is_checked_where_it_ended() -> None:
    cinder = "https://www.fellgear.test/p/cinder"  # captured only as a request that ended on its delivery tab
    item = {"component": "Tabs", "code": "AT27", "function": "F1", "description": "x", "url": cinder, "selector": "h1"}
    reply = read_explored(json.dumps({"functions": [F_FILTER], "execution_items": [item]}), START,
                          open_snapshot(WORLD))  # fmt: skip
    assert list(reply.items) == [f"{cinder}?tab=delivery"] and reply.dropped == ()


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (None, "the exploration ended without a card"),
        ("  ", "the exploration ended without a card"),
        ("I looked around.", "the reply is unusable: the reply holds no JSON object"),
        ('{"execution_items": []}', "the reply has no list 'functions'"),
        ('{"functions": [], "perception_items": {}}', "the reply's 'perception_items' is not a list"),
    ],
)
def test_an_answer_without_a_card_drops_the_site_with_why(answer: str | None, reason: str) -> None:
    reply = read_explored(answer, START, open_snapshot(WORLD))
    assert (reply.functions, dict(reply.items), list(reply.dropped)) == ((), {}, [drop(HOME, None, reason)])


def test_the_cache_key_ignores_browser_uses_date_and_tab_ids_only() -> None:
    def body(text: str) -> dict[str, Any]:
        return {"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]}

    one = "Current tab: 1147\nAvailable tabs:\nTab 1147: https://www.fellgear.test/ - Fellgear\n" \
          "[61]<a />\n\tTents\n|SHADOW(open)|*[88]<select id=sort-select />\n" \
          "<step_info>Step1 maximum:25\nToday:2026-12-02</step_info>"  # fmt: skip
    other_run = one.replace("1147", "4A0F").replace("2026-12-02", "2027-01-15").replace("[61]", "[62]")
    other_run = other_run.replace("*[88]", "*[301]")
    texts = (one, other_run, one.replace("Step1", "Step2"), one.replace("Tents", "Tarps"), one.replace("[61]", "61"))
    key = [proxy_key("/v1/messages", {}, body(t), BROWSER_USE_VOLATILE) for t in texts]
    assert key[0] == key[1]
    assert len({key[0], *key[2:]}) == 4


def test_the_command_line_refuses_mixed_options_before_anything_is_done(tmp_path: Path) -> None:
    out = tmp_path / "cards.json"
    assert main(["tasks", "cards", str(WORLD), "-o", str(out), "--site", "fellgear.test"]) == 2
    assert main(["tasks", "cards", str(WORLD), "-o", str(out), "--explore", "--page", TENTS]) == 2
    assert not out.exists()


async def test_exploring_needs_the_agents_key_and_anthropic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CAPREPLAY_AGENT_API_KEY")
    with pytest.raises(UsageError, match="CAPREPLAY_AGENT_API_KEY"):
        await write_explored_cards(WORLD, tmp_path / "cards.json", anthropic_settings("http://127.0.0.1:9"),
                                   tmp_path / "cache", sites=["fellgear.test"])  # fmt: skip
    openai = anthropic_settings("http://127.0.0.1:9").model_copy(update={"provider": "openai_compatible"})
    with pytest.raises(UsageError, match="speaks Anthropic's API"):
        await write_explored_cards(WORLD, tmp_path / "cards.json", openai, tmp_path / "cache")
    assert not (tmp_path / "cards.json").exists()


# ---------------------------------------------------------------------------------------------- on the replay


def agent_output(next_goal: str, action: dict[str, Any]) -> dict[str, Any]:
    """The input of browser-use's forced ``AgentOutput`` tool: its brain fields and one action."""
    return {"thinking": "scripted", "evaluation_previous_goal": "scripted", "memory": "scripted",
            "next_goal": next_goal, "action": [action]}  # fmt: skip


def explorer(received: Received) -> Reply:
    """Step 1 opens the tents; step 2, on the tents page, answers with the card. Only for the explore stage."""
    if "Stage: explore\nSite: fellgear.test" not in received.prompt:
        return Reply(status=500, message="not the fellgear exploration")
    if f"{TENTS} - " not in received.prompt:  # the tab list names the page the agent is on
        return Reply(tool_input=agent_output("Open the tents", {"navigate": {"url": TENTS}}), output_tokens=41)
    done = {"done": {"text": "card: " + json.dumps(CARD), "success": True}}
    return Reply(tool_input=agent_output("Report the card", done), output_tokens=230)


@pytest.mark.browser
async def test_an_exploration_makes_a_checked_card_and_a_rerun_is_answered_by_the_cache(tmp_path: Path) -> None:
    out, cache = tmp_path / "cards.json", tmp_path / "cache"
    async with FakeLLM(explorer) as fake:
        settings = anthropic_settings(fake.base_url, max_tokens=2048)
        cards = await write_explored_cards(WORLD, out, settings, cache, sites=["fellgear.test"])
        calls = fake.calls("messages")
    first = out.read_bytes()

    assert cards.method == "explore"
    (card,) = cards.cards
    assert (card.site, card.hosts, card.pages) == ("fellgear.test", ["www.fellgear.test"], [HOME, TENTS])
    assert card.functions == [CardFunction.model_validate(F_FILTER), CardFunction.model_validate(F_SORT)]
    assert card.execution_items == [
        ExecutionItem(id="A1", component="Slider", code="AT21", function="F1", description="Minimum price.",
                      location=ItemLocation(url=TENTS, selector=["[aria-label='Minimum price']"])),
    ]  # fmt: skip
    assert card.perception_items == [
        PerceptionItem(id="P1", component="Badge", code="PT07", function="F1", description="Corrie 1's badge.",
                       location=ItemLocation(url=TENTS, selector=["article[data-slug='corrie-1'] .badge"])),
    ]  # fmt: skip
    assert cards.dropped == [
        drop(HOME, NO_URL, "the item names no page: it has no 'url'"),
        drop(STOVES, ON_STOVES, f"{STOVES} is not a page of the snapshot"),
        drop(TENTS, NO_FORM, "selector 1 of 1 '#price-form' matched 0 elements, not exactly one"),
        drop(REVIEWS, ELSEWHERE, f"{REVIEWS} is a page of trailverdict.test, not of the explored site fellgear.test"),
    ]
    assert set(cards.made.prompts) == {"explore"}
    cost = cards.made.cost["cards"]
    assert len(calls) == 2 and all(c.headers["x-api-key"] == KEY for c in calls)
    assert (cost.calls, cost.output_tokens) == (2, 41 + 230)
    assert cost.input_tokens == sum(c.input_tokens for c in calls)
    run = tmp_path / "cards.json.explore"
    (record,) = [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]
    assert record["status"] == "answered" and [s["action"] for s in record["steps"]] == ["navigate", "done"]
    assert all((run / s["screenshot"]).is_file() for s in record["steps"])
    assert [r for r in record["requests"] if r["result"] in ("miss", "blocked")] == []

    # Again from the command line (in a thread: it runs its own event loop), the same settings, another endpoint.
    async with FakeLLM(Reply(status=500, message="the cache should have answered")) as idle:
        settings_file = tmp_path / "settings.json"
        settings_file.write_text(settings.model_copy(update={"base_url": idle.base_url}).model_dump_json())
        status = await asyncio.to_thread(main, ["tasks", "cards", str(WORLD), "-o", str(out), "--explore", "--site",
                                                "fellgear.test", "--settings", str(settings_file), "--cache",
                                                str(cache)])  # fmt: skip
    assert status == 0
    assert idle.received == []
    assert out.read_bytes() == first
