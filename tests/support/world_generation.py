"""The world's generated-task material the tests of task generation share: the budget-tent instance a model
would write for the fellgear and trailverdict cards (its gold path, outputs, values and rubric), and two multi-hop
drafts over the world's pages. Every value is the one the world's pages show (snapshots/world/captures/*.txt)."""

from __future__ import annotations

from typing import Any

TENTS = "https://www.fellgear.test/c/tents"
COMPARE = "https://www.trailverdict.test/compare/tents"
REVIEW = "https://www.trailverdict.test/reviews/scarth-2-expedition"
REGION = "https://data.parkstats.test/regions/high-scarth"
TRAIL = "https://data.parkstats.test/trails/kell-ridge-traverse"
HUT = "https://book.hutnet.test/huts/ridge-end-hut"

DESCRIPTION = (
    "I have between £100 and £250 to spend on a tent. Of Fellgear's tents in that range, which one scored best in "
    "TrailVerdict's tent comparison? Tell me the tent, its Fellgear price and its TrailVerdict score, with the URL "
    "of the Fellgear listing and of the TrailVerdict page you read the score on."
)
GOLD_PATH = [
    {"type": "goto", "url": TENTS},
    {"type": "drag", "selector": '.range-handle[data-handle="min"]', "dx": 100.0, "dy": 0.0, "steps": 10},
    {"type": "drag", "selector": '.range-handle[data-handle="max"]', "dx": -250.0, "dy": 0.0, "steps": 10},
    {"type": "click", "selector": "#range-apply"},
    {"type": "read", "output": "listing_url", "source": "url"},
    {"type": "read", "output": "tent_price", "source": "attribute",
     "selector": '.product-card[data-slug="fellside-2-lite"] .price', "attribute": "data-value"},
    {"type": "goto", "url": COMPARE},
    {"type": "click", "selector": '#compare th[data-col="score"] a'},
    {"type": "click", "selector": '#compare th[data-col="score"] a'},
    {"type": "read", "output": "compare_url", "source": "url"},
    {"type": "read", "output": "tent_name", "selector": '#compare tr[data-slug="fellside-2-lite"] .c-name'},
    {"type": "read", "output": "tent_score", "selector": '#compare tr[data-slug="fellside-2-lite"] .c-score'},
]  # fmt: skip
OUTPUTS = [
    {"name": "tent_name", "type": "text", "role": "user_value", "description": "The best-scoring tent in budget."},
    {"name": "tent_price", "type": "number", "role": "user_value", "description": "Its Fellgear price in pounds."},
    {"name": "listing_url", "type": "url", "role": "provenance_url", "description": "The Fellgear listing."},
    {"name": "tent_score", "type": "number", "role": "user_value", "description": "Its TrailVerdict score."},
    {"name": "compare_url", "type": "url", "role": "provenance_url", "description": "The comparison page."},
]
EXPECTED: dict[str, Any] = {"tent_name": "Fellside 2 Lite", "tent_price": 215, "tent_score": "8.6"}
INSTANCE = {
    "description": DESCRIPTION,
    "outputs": OUTPUTS,
    "expected": EXPECTED,
    "covered_items": ["fellgear.test:A1", "trailverdict.test:F1:A1", "trailverdict.test:P1", "fellgear.test:A1"],
    "gold_path": GOLD_PATH,
    "start_url": "https://www.fellgear.test/",
}


def leaf(node_id: str, kind: str, point: str | None, check: dict[str, Any]) -> dict[str, Any]:
    return {"id": node_id, "description": node_id, "critical": True, "kind": kind, "point": point, "check": check}


RUBRIC = {"id": "root", "description": "The best budget tent", "children": [
    leaf("in-range", "action", "fellgear-test-a1",
         {"check": "claim_on_page", "field": "tent_price", "url_field": "listing_url", "match": "number"}),
    leaf("sorted", "action", "trailverdict-test-a1", {"check": "url_in_snapshot", "field": "compare_url"}),
    leaf("best", "perception", "trailverdict-test-p1",
         {"check": "claim_on_page", "field": "tent_score", "url_field": "compare_url", "match": "number"}),
]}  # fmt: skip

GOOD_DRAFT: dict[str, Any] = {
    "question": "TrailVerdict tested the Scarth 2 Expedition tent in one of the park regions ParkStats covers. "
    "How large is that region, in square kilometres?",
    "answer": {"value": "405", "type": "number", "page": "partner", "selector": 'p:has-text("Area:")',
               "pattern": r"Area: ([\d,]+) km"},
    "bridge": {"value": "High Scarth", "type": "text", "page": "seed", "selector": "#test-region", "pattern": None},
    "evidence": {"seed": "We used the Scarth 2 Expedition for 9 nights in High Scarth.", "partner": "Area: 405 km²."},
}  # fmt: skip
HUT_DRAFT: dict[str, Any] = {
    "question": "I'm walking the Kell Ridge Traverse. What does a weekday night cost at the hut on its route?",
    "answer": {"value": "34", "type": "number", "page": "partner", "selector": "p:has-text('a night')",
               "pattern": r"from £(\d+) a night"},
    "bridge": {"value": "Ridge End Hut", "type": "text", "page": "seed", "selector": "#route-huts .hut-link",
               "pattern": r"^(.+?) \("},
    "evidence": {"seed": "Ridge End Hut (710 m)", "partner": "from £34 a night"},
}  # fmt: skip
