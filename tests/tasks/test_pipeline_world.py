"""The whole task-generation pipeline on the committed world snapshot, from the command line, with no key.

Cards, proposals, instances, multi-hop tasks, their proof, a review sheet and its acceptance run as a user runs
them (``python -m capreplay tasks ...``), against the fake Messages API with scripted replies. Some replies must
be rejected, each for its own reason: a card item whose selector matches nothing, a proposal the model's review
finds contrived, an instance whose expected value no page shows, one whose gold path leaves the snapshot, a
question one page answers. The tasks that pass are accepted from the sheet, run by the gold agent through
``capreplay run`` and judged 1.0. Bad inputs exit 2 with one line.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from capreplay.agents.run import read_agent_run
from capreplay.runs.episode_log import read_episodes
from capreplay.tasks.prompts import prompt
from capreplay.testing.fake_llm import FakeLLM, Received, Reply
from tests.support.cli import run
from tests.support.paths import ROOT
from tests.support.world_generation import (
    COMPARE,
    GOLD_PATH,
    GOOD_DRAFT,
    HUT,
    HUT_DRAFT,
    INSTANCE,
    REGION,
    REVIEW,
    RUBRIC,
    TENTS,
    TRAIL,
)

pytestmark = pytest.mark.browser

WORLD = ROOT / "snapshots" / "world"


def _item(component: str, code: str, selector: str, description: str) -> dict[str, Any]:
    return {"component": component, "code": code, "function": "F1", "description": description,
            "selector": [selector]}  # fmt: skip


TENTS_CARD = {
    "functions": [{"id": "F1", "name": "Tent price filtering", "tags": ["core", "read"],
                   "description": "Narrow the tents to a price range."}],
    "execution_items": [
        _item("Slider", "AT21", "[aria-label='Maximum price']", "Drag the price range's handles and apply it."),
        _item("Form", "AT17", "#price-form", "A price form (the page has none)."),
    ],
    "perception_items": [],
}  # fmt: skip
COMPARE_CARD = {
    "functions": [{"id": "F1", "name": "Tent comparison", "tags": ["core", "read"],
                   "description": "Tested tents by score, sortable."}],
    "execution_items": [_item("Table", "AT33", "#compare th[data-col='score'] a", "Sort the table by score.")],
    "perception_items": [_item("Table", "PT22", "#compare", "Tell which tent leads the sorted table.")],
}  # fmt: skip


def _step(step_id: str, site: str, does: str, needs: list[str]) -> dict[str, Any]:
    return {
        "id": step_id,
        "site": site,
        "function": "F1",
        "does": does,
        "needs": needs,
        "produces": f"{step_id}'s finds",
    }


def _proposal(persona: str) -> dict[str, Any]:
    return {
        "scenario": {"persona": persona, "situation": "A first trip in July", "pain_point": "Prices and scores are "
                     "on two sites", "decision_goal": "Which tent to buy"},
        "pattern": "sequential",
        "steps": [_step("S1", "fellgear.test", "Narrow the tents to my budget of £100-£250", []),
                  _step("S2", "trailverdict.test", "Find the best score among the tents of S1", ["S1"])],
        "planned_outputs": ["the tent", "its price and score"],
    }  # fmt: skip


PROPOSALS = [_proposal("A walker buying a first tent"), _proposal("A parent kitting out a family trip"),
             _proposal("A student on a budget"), _proposal("A collector of tent brands")]  # fmt: skip

NO_PAGE_SHOWS_IT = INSTANCE | {"expected": {**INSTANCE["expected"], "tent_name": "Dunlin 3 Ultra"}}
NEVER_CAPTURED = "https://www.fellgear.test/c/tents-archive"
LEAVES = INSTANCE | {"gold_path": [{"type": "goto", "url": NEVER_CAPTURED}, *GOLD_PATH]}


def _check(meaningful: bool, reason: str) -> str:
    return json.dumps({"meaningful": meaningful, "dynamic": True, "reason": reason})


REPLIES: dict[tuple[str, str], str] = {
    ("card", f"{TENTS}"): json.dumps(TENTS_CARD),
    ("card", f"{COMPARE}"): json.dumps(COMPARE_CARD),
    ("affinity", "fellgear.test and trailverdict.test"): json.dumps({"level": "high", "reason": "Scores pick a tent."}),
    ("propose", "fellgear.test, trailverdict.test"): json.dumps({"proposals": PROPOSALS}),
    ("proposal_check", "prop-001"): _check(True, "The budget decides which scores are compared."),
    ("proposal_check", "prop-002"): _check(True, "A family needs a tent it can afford."),
    ("proposal_check", "prop-003"): _check(True, "A student compares before buying."),
    ("proposal_check", "prop-004"): _check(False, "Nobody collects tent brands this way."),
    ("instantiate", "prop-001"): json.dumps(INSTANCE),
    ("instantiate", "prop-002"): json.dumps(NO_PAGE_SHOWS_IT),
    ("instantiate", "prop-003"): json.dumps(LEAVES),
    ("rubric", "prop-001"): json.dumps(RUBRIC),
    ("rubric", "prop-002"): json.dumps(RUBRIC),
    ("rubric", "prop-003"): json.dumps(RUBRIC),
    ("multihop", f"{REVIEW} + {REGION}"): json.dumps(GOOD_DRAFT),
    ("multihop", f"{TRAIL} + {HUT}"): json.dumps(HUT_DRAFT),
}
PASS_REVIEW = json.dumps({"clear": True, "unambiguous": True, "compositional": True, "reason": "one answer"})


def _subject(received: Received) -> tuple[str, str]:
    """The stage and what the request is about, from the first text that names a stage."""
    text = next(t for t in received.texts if t.startswith("Stage: "))
    stage, named = text.splitlines()[:2]
    return stage.removeprefix("Stage: "), named.partition(": ")[2]


def _answer_from_pages(received: Received, subject: str) -> str:
    # The region question needs both pages; the hut's own page names the trail, so it alone answers.
    region = "Scarth 2 Expedition" in received.prompt
    if subject.endswith("pages: both"):
        return json.dumps({"answer": "405 km²" if region else "£34"})
    if subject.endswith("pages: partner only") and not region:
        return json.dumps({"answer": "34"})
    return json.dumps({"answer": None})


def script(received: Received) -> Reply | str:
    stage, subject = _subject(received)
    if stage == "multihop_review":
        return PASS_REVIEW
    if stage == "answer_from_pages":
        return _answer_from_pages(received, subject)
    if stage == "card":
        subject = subject.split("\n")[0]
    reply = REPLIES.get((stage, subject))
    return reply if reply is not None else Reply(status=500, message=f"no scripted reply for {(stage, subject)}")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CAPREPLAY_JUDGE"))}
    return env | {"CAPREPLAY_TASKS_API_KEY": "generation-key"}


def tasks_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run(list(args), env=_env(), cwd=ROOT, timeout=600)


@dataclass
class Pipeline:
    """Every command's result and the files the pipeline wrote."""

    folder: Path
    out: dict[str, subprocess.CompletedProcess[str]]
    calls_after_first_propose: int
    calls_after_second_propose: int

    def json(self, name: str) -> Any:
        return json.loads((self.folder / name).read_text(encoding="utf-8"))

    def lines(self, name: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in (self.folder / name).read_text(encoding="utf-8").splitlines()]


def _decide(sheet: Path, decisions: Mapping[str, str], reviewer: str) -> None:
    """Fill the sheet as a person does: sign it, tick a box in each named task's section, give a reason."""
    lines = sheet.read_text(encoding="utf-8").split("\n")
    current = None
    for i, line in enumerate(lines):
        if line.startswith("Reviewer:") and current is None:
            lines[i] = f"Reviewer: {reviewer}"
        if line.startswith("## Task "):
            current = line.partition(": ")[2]
        if current in decisions and line == f"- [ ] {decisions[current]}":
            lines[i] = f"- [x] {decisions[current]}"
        if current in decisions and line == "Reason:":
            lines[i] = f"Reason: {reviewer} read the pages"
    sheet.write_text("\n".join(lines), encoding="utf-8")


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Pipeline:
    folder = tmp_path_factory.mktemp("pipeline")
    out: dict[str, subprocess.CompletedProcess[str]] = {}

    async def run_all() -> tuple[int, int]:
        async with FakeLLM(script) as fake:
            model = ["--base-url", fake.base_url, "--cache", str(folder / "cache")]

            async def step(name: str, *args: str) -> None:
                out[name] = await asyncio.to_thread(tasks_cli, *args)

            await step("cards", "tasks", "cards", str(WORLD), "-o", str(folder / "cards.json"), "--page", TENTS,
                       "--page", COMPARE, *model)  # fmt: skip
            await step("propose", "tasks", "propose", "--cards", str(folder / "cards.json"), "-o",
                       str(folder / "proposals.json"), "--per-call", "4", *model)  # fmt: skip
            first = len(fake.received)
            await step("propose-again", "tasks", "propose", "--cards", str(folder / "cards.json"), "-o",
                       str(folder / "proposals-again.json"), "--per-call", "4", *model)  # fmt: skip
            second = len(fake.received)
            await step("instantiate", "tasks", "instantiate", "--proposals", str(folder / "proposals.json"),
                       "--cards", str(folder / "cards.json"), "--snapshot", str(WORLD), "-o",
                       str(folder / "workflows"), *model)  # fmt: skip
            await step("multihop", "tasks", "multihop", str(WORLD), "-o", str(folder / "multihop"), "--pair", REVIEW,
                       REGION, "--pair", TRAIL, HUT, *model)  # fmt: skip
            return first, second

    first, second = asyncio.run(run_all())
    for batch in ("workflows", "multihop"):
        out[f"review {batch}"] = tasks_cli("tasks", "review", str(folder / batch))
        proven = json.loads((folder / batch / "batch.json").read_text(encoding="utf-8"))["proven"]
        _decide(folder / batch / "review.md", dict.fromkeys(proven, "accept"), "Ada Lindqvist")
        out[f"accept {batch}"] = tasks_cli("tasks", "accept", str(folder / batch / "review.md"), "--into",
                                           str(folder / "accepted.json"))  # fmt: skip
    # a second reviewer rejects what the first accepted
    out["review again"] = tasks_cli("tasks", "review", str(folder / "workflows"), "-o", str(folder / "second.md"))
    _decide(folder / "second.md", {"prop-001": "reject"}, "Bo Ekdahl")
    out["agreement"] = tasks_cli("tasks", "agreement", str(folder / "workflows" / "review.md"),
                                 str(folder / "second.md"), "--json")  # fmt: skip
    results = folder / "results"
    # two browsers at once, as a user with two cores runs the accepted tasks
    out["run"] = tasks_cli("run", "--agent", "gold", "--tasks", str(folder / "accepted.json"), "--results",
                           str(results), "--run-id", "generated", "--browsers", "2")  # fmt: skip
    out["judge"] = tasks_cli("judge", str(results / "runs" / "generated"), "--json", "--cache", str(folder / "jc"))
    out["report"] = tasks_cli("tasks", "report", str(folder / "workflows"), str(folder / "multihop"), "--cards",
                              str(folder / "cards.json"), "--proposals", str(folder / "proposals.json"),
                              "--accepted", str(folder / "accepted.json"), "--json")  # fmt: skip
    return Pipeline(folder, out, first, second)


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_cards_keep_the_items_the_replay_bears_out_and_drop_a_selector_that_matches_nothing(pipeline: Pipeline) -> None:
    _ok(pipeline.out["cards"])
    cards = pipeline.json("cards.json")
    by_site = {c["site"]: c for c in cards["cards"]}
    assert sorted(by_site) == ["fellgear.test", "trailverdict.test"]
    assert [(i["id"], i["code"]) for i in by_site["fellgear.test"]["execution_items"]] == [("A1", "AT21")]
    assert [(i["id"], i["code"]) for i in by_site["trailverdict.test"]["execution_items"]] == [("A1", "AT33")]
    assert [(i["id"], i["code"]) for i in by_site["trailverdict.test"]["perception_items"]] == [("P1", "PT22")]
    (dropped,) = cards["dropped"]
    assert dropped["page"] == TENTS and "#price-form" in dropped["reason"] and "matched 0" in dropped["reason"]


def test_proposals_re_run_from_the_cache_bit_for_bit_and_the_models_review_rejects_one(pipeline: Pipeline) -> None:
    _ok(pipeline.out["propose"])
    _ok(pipeline.out["propose-again"])
    assert pipeline.calls_after_second_propose == pipeline.calls_after_first_propose
    first = (pipeline.folder / "proposals.json").read_bytes()
    assert (pipeline.folder / "proposals-again.json").read_bytes() == first
    proposals = pipeline.json("proposals.json")["proposals"]
    assert [p["id"] for p in proposals] == ["prop-001", "prop-002", "prop-003", "prop-004"]
    assert [c["meaningful"] for c in proposals[3]["checks"]] == [False]


def test_instances_are_proven_and_the_broken_ones_rejected_for_their_reason(pipeline: Pipeline) -> None:
    result = pipeline.out["instantiate"]
    _ok(result)
    batch = pipeline.json("workflows/batch.json")
    assert batch["candidates"] == 3 and batch["proven"] == ["prop-001"]
    assert batch["made"]["prompts"] == {"instantiate": prompt("instantiate").sha256}
    assert {stage: cost["calls"] for stage, cost in batch["made"]["cost"].items()} == {"instantiate": 3, "rubric": 3}
    rejected = {r["candidate"]: r for r in pipeline.lines("workflows/rejected.jsonl")}
    assert rejected["prop-004"]["stage"] == "proposal"
    assert rejected["prop-002"]["stage"] == "proof"
    assert rejected["prop-002"]["reason"] == ("values_on_pages: 'tent_name' is 'Fellside 2 Lite' on the frozen "
                                              "pages, not the expected 'Dunlin 3 Ultra'")  # fmt: skip
    assert rejected["prop-003"]["reason"].startswith("on_snapshot: ")
    assert NEVER_CAPTURED in rejected["prop-003"]["reason"]
    tasks = pipeline.json("workflows/tasks.json")["workflows"]["tasks"]
    assert [t["id"] for t in tasks] == ["prop-001"]
    assert [p["code"] for p in tasks[0]["covered_points"]] == ["AT21", "AT33", "PT22"]
    assert "rejected prop-002 (proof): values_on_pages" in result.stdout
    # prop-002 keeps prop-001's path: the proof ran it once, and the proof run holds an episode of each candidate
    run = pipeline.folder / "workflows" / "proof-run"
    assert sorted(key.task for key in read_agent_run(run).planned) == ["prop-001", "prop-003"]
    assert sorted(record.key.task for record in read_episodes(run)) == ["prop-001", "prop-002", "prop-003"]


def test_a_multi_hop_question_one_page_answers_is_rejected_and_the_other_proven(pipeline: Pipeline) -> None:
    _ok(pipeline.out["multihop"])
    batch = pipeline.json("multihop/batch.json")
    assert batch["candidates"] == 1 and len(batch["proven"]) == 1
    (rejected,) = pipeline.lines("multihop/rejected.jsonl")
    assert rejected["stage"] == "filter" and rejected["reason"] == f"one page answers it: {HUT}"
    (task,) = pipeline.json("multihop/tasks.json")["workflows"]["tasks"]
    assert task["flow"] == "multi_hop" and task["expected"] == {"answer": "405", "bridge": "High Scarth"}
    gotos = [s["url"] for s in task["gold_path"] if s["type"] == "goto"]
    assert gotos == [REVIEW, REGION]


def test_the_accepted_tasks_run_with_the_gold_agent_and_score_one(pipeline: Pipeline) -> None:
    for name in ("review workflows", "review multihop", "accept workflows", "accept multihop"):
        _ok(pipeline.out[name])
    accepted = pipeline.json("accepted.json")["workflows"]["tasks"]
    assert len(accepted) == 2 and accepted[0]["id"] == "prop-001"
    _ok(pipeline.out["run"])
    metrics = json.loads(_ok(pipeline.out["judge"]))
    (gold,) = metrics["agents"]
    assert gold["scored"] == 2 and gold["success_rate"]["value"] == 1.0


def test_two_reviewers_sheets_give_their_agreement(pipeline: Pipeline) -> None:
    _ok(pipeline.out["review again"])
    report = json.loads(_ok(pipeline.out["agreement"]))
    assert report["reviewers"] == ["Ada Lindqvist", "Bo Ekdahl"]
    assert (report["n"], report["both_accept"], report["only_first_accepts"], report["agreed"]) == (1, 0, 1, 0)


def test_the_report_counts_types_flows_rejections_and_cost(pipeline: Pipeline) -> None:
    report = json.loads(_ok(pipeline.out["report"]))
    assert report["accepted"] == 2
    assert report["action_types"] == ["AT21", "AT33"] and report["perception_types"] == ["PT22"]
    workflows, multihop = report["batches"]
    assert workflows["flows"] == {"sequential": 1} and multihop["flows"] == {"multi_hop": 1}
    assert workflows["rejected"]["proof"] == {"on_snapshot": 1, "values_on_pages": 1}
    assert multihop["rejected"] == {"filter": {"one page answers it": 1}}
    # cards 2 + affinity 1 + propose 1 + checks 4, then 3 instances and 3 rubrics, then 2 drafts and the filters
    assert workflows["cost"]["calls"] == 6
    assert report["cost"]["calls"] > 14


def test_bad_inputs_exit_2_with_one_line(pipeline: Pipeline, tmp_path: Path) -> None:
    no_graph = tasks_cli("tasks", "multihop", str(ROOT / "snapshots" / "fixtures"), "-o", str(tmp_path / "m"))
    assert no_graph.returncode == 2 and "has no crawl graph" in no_graph.stderr
    other = tasks_cli("tasks", "instantiate", "--proposals", str(pipeline.folder / "proposals.json"), "--cards",
                      str(pipeline.folder / "cards.json"), "--snapshot", str(ROOT / "snapshots" / "study"), "-o",
                      str(tmp_path / "w"))  # fmt: skip
    assert other.returncode == 2 and "cards.json: describes snapshot" in other.stderr
    sheet = tmp_path / "sheet.md"
    sheet.write_text((pipeline.folder / "workflows" / "review.md").read_text(encoding="utf-8").replace("- [x] accept",
                     "- [x] accept\n- [x] reject", 1), encoding="utf-8")  # fmt: skip
    malformed = tasks_cli("tasks", "accept", str(sheet), "--into", str(tmp_path / "t.json"))
    assert malformed.returncode == 2
    for result in (no_graph, other, malformed):
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "m").exists() and not (tmp_path / "w").exists() and not (tmp_path / "t.json").exists()
