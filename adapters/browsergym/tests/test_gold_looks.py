"""The gold agent on an observation taken before a clicked link's page arrived, or after a click that missed (a busy
machine): it waits and looks again, sends an action that left the page as it was once more, and takes the reads
since its action from the page that came, the URL included."""

from __future__ import annotations

from typing import Any

import pytest
from browsergym.core.constants import BROWSERGYM_ID_ATTRIBUTE
from capreplay.models.workflow import Click, Read, Workflows

from capreplay_browsergym.gold import LOOKS, NAVIGATION_WAIT_MS, GoldPathAgent, NotOnPage

RAIN_TENT = "rain-tent"
WAIT = f"noop({NAVIGATION_WAIT_MS!r})"
OVERVIEW = "https://www.fellgear.test/p/skerry-2"
SPECS = OVERVIEW + "?tab=specs"
TAB_BID = "41"

Element = tuple[str, dict[str, str], "str | list[Element]"]
"""A tag, its attributes, and its text or its child elements."""


def _dom(elements: list[Element]) -> dict[str, Any]:
    """A DOM snapshot as BrowserGym observes it (``DOMSnapshot.captureSnapshot``'s shape): ``elements`` in a body."""
    strings: list[str] = []
    nodes: dict[str, Any] = {
        "contentDocumentIndex": {"index": [], "value": []},
        "nodeType": [], "nodeName": [], "nodeValue": [], "parentIndex": [], "attributes": [],
    }  # fmt: skip

    def string(text: str) -> int:
        if text not in strings:
            strings.append(text)
        return strings.index(text)

    def add(kind: int, name: str, parent: int, attributes: dict[str, str], value: str | None = None) -> int:
        nodes["nodeType"].append(kind)
        nodes["nodeName"].append(string(name))
        nodes["nodeValue"].append(-1 if value is None else string(value))
        nodes["parentIndex"].append(parent)
        nodes["attributes"].append([string(part) for pair in attributes.items() for part in pair])
        return len(nodes["nodeType"]) - 1

    def add_elements(parent: int, children: list[Element]) -> None:
        for tag, attributes, content in children:
            element = add(1, tag.upper(), parent, attributes)
            if isinstance(content, str):
                add(3, "#text", element, {}, content)
            else:
                add_elements(element, content)

    add_elements(add(1, "HTML", add(9, "#document", -1, {}), {}), [("body", {}, elements)])
    return {"documents": [{"nodes": nodes}], "strings": strings}


def _obs(url: str, elements: list[Element]) -> dict[str, Any]:
    return {"url": url, "dom_object": _dom(elements), "last_action_error": ""}


TAB: Element = ("a", {"role": "tab", "href": SPECS, BROWSERGYM_ID_ATTRIBUTE: TAB_BID}, "Specifications")
OVERVIEW_PAGE: list[Element] = [("h1", {"id": "product-name"}, "Skerry 2"), ("div", {"class": "tabs"}, [TAB])]
SPECS_PAGE: list[Element] = [
    *OVERVIEW_PAGE,
    ("table", {"id": "specs"}, [("td", {"data-spec": "flysheet hydrostatic head", "data-value": "3000"}, "3,000 mm")]),
]


@pytest.fixture
def agent(workflows: Workflows) -> GoldPathAgent:
    """The rain tent's click on the specifications tab and the reads after it (the URL, then the table's value)."""
    path = workflows.task(RAIN_TENT).gold_path
    click = next(n for n, s in enumerate(path) if isinstance(s, Click))
    steps = path[click:]
    assert [type(s) for s in steps[:2]] == [Click, Read] and all(isinstance(s, Read) for s in steps[1:])
    task = workflows.task(RAIN_TENT)
    return GoldPathAgent(task.model_copy(update={"gold_path": [steps[0], steps[1], steps[-1]]}))


def test_the_agent_waits_for_the_clicked_links_page_and_reads_it_whole(agent: GoldPathAgent) -> None:
    action, _ = agent.get_action(_obs(OVERVIEW, OVERVIEW_PAGE))
    assert action == f"click({TAB_BID!r})"
    # BrowserGym observed the page before the link's navigation: the table is not there yet.
    assert agent.get_action(_obs(OVERVIEW, OVERVIEW_PAGE)) == (WAIT, {"step": 2, "waiting": "page"})
    action, _ = agent.get_action(_obs(SPECS, SPECS_PAGE))
    assert action.startswith("send_msg_to_user(")
    read_url, read_head = agent.task.gold_path[1:]
    assert isinstance(read_url, Read) and isinstance(read_head, Read)
    assert agent.outputs[read_url.output] == SPECS  # read again from the new page, not from the one before
    assert agent.outputs[read_head.output] == "3000"


def test_a_click_that_left_the_page_as_it_was_is_sent_again_after_a_wait(agent: GoldPathAgent) -> None:
    click, _ = agent.get_action(_obs(OVERVIEW, OVERVIEW_PAGE))
    assert agent.get_action(_obs(OVERVIEW, OVERVIEW_PAGE))[0] == WAIT
    assert agent.get_action(_obs(OVERVIEW, OVERVIEW_PAGE)) == (click, {"step": 1, "again": 2})
    action, _ = agent.get_action(_obs(SPECS, SPECS_PAGE))
    assert action.startswith("send_msg_to_user(")


def test_a_page_that_changed_is_waited_for_not_acted_on_again(agent: GoldPathAgent) -> None:
    agent.get_action(_obs(OVERVIEW, OVERVIEW_PAGE))
    loading = [("p", {"class": "loading"}, "Loading the specifications")]
    for _ in range(LOOKS):
        assert agent.get_action(_obs(SPECS, loading))[0] == WAIT


def test_looking_again_is_bounded(agent: GoldPathAgent) -> None:
    click, _ = agent.get_action(_obs(OVERVIEW, OVERVIEW_PAGE))
    actions = [agent.get_action(_obs(OVERVIEW, OVERVIEW_PAGE))[0] for _ in range(LOOKS)]
    assert actions == [WAIT, click] * (LOOKS // 2) + [WAIT] * (LOOKS % 2)
    with pytest.raises(NotOnPage, match="nothing in the observation matches"):
        agent.get_action(_obs(OVERVIEW, OVERVIEW_PAGE))
