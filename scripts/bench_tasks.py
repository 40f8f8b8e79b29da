"""Task-generation benchmark: what the proof costs per task, and what making site cards costs per page.

    uv run python scripts/bench_tasks.py [--tasks tasks.json] [--rounds 2]

- Proof: every workflow task of the tasks file proven on its snapshot (``capreplay.tasks.proof.prove_tasks``: the
  gold run through the real harness, then judging the gold answer and one changed answer per output), timed as a
  whole and split into the gold run and the judging. The judge's model is the fake Messages API answering every
  claim "holds": a judge that says yes to everything, which the proof must catch where a rubric leans on a model's
  claim (those tasks fail their mutations, and the script lists them).
- Cards: every crawled page of the snapshot through the cards stage (page load, views, one call, every item checked
  on the replay), the fake answering each page with a card of one function and no item, so the figure is the
  stage's own cost, not a model's.

Each part runs ``--rounds`` times in turn; raw figures go to ``results/bench/tasks-<date>.json``, medians are
printed. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from capreplay.llm import make_client
from capreplay.llm.messages import ModelSettings
from capreplay.runs.tasks_file import load_tasks_file
from capreplay.tasks.cards import make_cards
from capreplay.tasks.meter import Meter
from capreplay.tasks.proof import gold_run, judge_proofs
from capreplay.testing.fake_llm import FakeLLM

YES = json.dumps({"holds": True, "quote": ""})
EMPTY_CARD = json.dumps({"functions": [{"id": "F1", "name": "Page reading", "tags": [], "description": "Read it."}],
                         "execution_items": [], "perception_items": []})  # fmt: skip


async def proof_round(snapshot: Path, workflows: Any) -> dict[str, Any]:
    """One proof of every task: the gold run, then the judging, each timed."""
    async with FakeLLM(YES) as fake:
        settings = ModelSettings(model="claude-judge", max_tokens=200, base_url=fake.base_url)
        client = make_client(settings, api_key="bench")
        with tempfile.TemporaryDirectory() as work:
            began = time.monotonic()
            records = await gold_run(snapshot, workflows, Path(work))
            ran = time.monotonic()
            proofs = await judge_proofs(snapshot, workflows, records, client)
            judged = time.monotonic()
        await client.aclose()
    return {
        "tasks": len(proofs),
        "proven": sum(p.passed for p in proofs),
        "rejected": {p.task: p.reason for p in proofs if not p.passed},
        "total_s": round(judged - began, 2),
        "gold_run_s": round(ran - began, 2),
        "judging_s": round(judged - ran, 2),
        "per_task_s": round((judged - began) / len(proofs), 2),
        "mutations": sum(len(p.mutations) for p in proofs),
    }


async def cards_round(snapshot: Path) -> dict[str, Any]:
    """Cards of every crawled page with an empty card for each."""
    async with FakeLLM(EMPTY_CARD) as fake:
        settings = ModelSettings(model="claude-cards", max_tokens=4000, base_url=fake.base_url)
        client = make_client(settings, api_key="bench")
        began = time.monotonic()
        cards = await make_cards(snapshot, Meter(client))
        total = time.monotonic() - began
        await client.aclose()
        tokens = [r.input_tokens for r in fake.calls("messages")]
    pages = sum(len(c.pages) for c in cards.cards)
    return {"pages": pages, "total_s": round(total, 2), "per_page_s": round(total / pages, 2),
            "input_tokens_median": statistics.median(tokens), "input_tokens_max": max(tokens)}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=Path("tasks.json"))
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    tasks = load_tasks_file(args.tasks)
    assert tasks.workflows is not None, "the tasks file has no workflows"
    snapshot = tasks.snapshot_path(tasks.workflows.snapshot, args.tasks)
    proofs, cards = [], []
    for n in range(args.rounds):
        print(f"round {n + 1}: proof", file=sys.stderr)
        proofs.append(asyncio.run(proof_round(snapshot, tasks.workflows)))
        print(f"round {n + 1}: cards", file=sys.stderr)
        cards.append(asyncio.run(cards_round(snapshot)))
    median = {k: statistics.median(r[k] for r in proofs) for k in ("total_s", "gold_run_s", "judging_s", "per_task_s")}
    card_median = {k: statistics.median(r[k] for r in cards) for k in ("total_s", "per_page_s")}
    out = {"when": datetime.now(UTC).isoformat(), "machine": platform.platform(), "python": platform.python_version(),
           "snapshot": str(snapshot), "proof": proofs, "cards": cards, "proof_median": median,
           "cards_median": card_median}  # fmt: skip
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H%M")
    path = Path("results/bench") / f"tasks-{stamp}.json"
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print("| part | items | total s | per item s | gold run s | judging s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    print(f"| proof | {proofs[0]['tasks']} tasks | {median['total_s']:.1f} | {median['per_task_s']:.1f} | "
          f"{median['gold_run_s']:.1f} | {median['judging_s']:.1f} |")  # fmt: skip
    print(f"| cards | {cards[0]['pages']} pages | {card_median['total_s']:.1f} | {card_median['per_page_s']:.2f} | | |")
    print(f"proven {proofs[0]['proven']} of {proofs[0]['tasks']}; rejected: {proofs[0]['rejected']}")
    print(f"raw figures: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
