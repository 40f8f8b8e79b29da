"""``capreplay study run --backend ray``: each page session a Ray task on the loopback cluster, its calls to the
fake model API over real HTTP, recorded by the driver exactly as the same run on this machine records them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from capreplay.cluster.study_sessions import ray_sessions
from capreplay.study.answers.prompt import prompt_texts
from capreplay.study.records import RunRecord
from capreplay.study.run.execute import RunOptions, run_study
from capreplay.study.run_files import CALLS_FILE, read_page_failures, read_records, read_tokens
from capreplay.testing.fake_llm import Received
from tests.support.study_run import REGISTRATION, WRONG_ACT, answer_key, fake_llm, study_of

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = ["login", "embed"]


def _comparable(record: RunRecord) -> tuple[Any, ...]:
    """What a record says about its cell, without what differs between two runs (times, request ids)."""
    verdict = record.verdict
    assert verdict is not None
    return (record.cell, record.answer_text, record.error_kind, record.unparseable, verdict.correct,
            verdict.reason, verdict.representable, verdict.screenshot, verdict.geometry)  # fmt: skip


def test_a_study_run_on_ray_records_what_the_local_run_records(cluster: Any, results: Path) -> None:
    study = study_of(results)
    protocol = study.protocol
    # READ tasks get their right answer and ACT tasks a wrong one: both are scored on the page in its session.
    replies = {prompt_texts(protocol, t, name)[1]: WRONG_ACT[name] if t.kind == "ACT" else {"answer": t.answer}
               for t in study.tasks for name in protocol.representations}  # fmt: skip

    def script(received: Received) -> str:
        key = answer_key(received)
        return next(json.dumps(answer) for after, answer in replies.items() if key.endswith(after))

    with fake_llm(script) as fake:
        options = RunOptions(registration=REGISTRATION, results=results, base_url=fake.base_url, pages=PAGES,
                             repeats=1)  # fmt: skip
        local = asyncio.run(run_study(options.model_copy(update={"run_id": "local"})))
        on_ray = asyncio.run(run_study(options.model_copy(update={"run_id": "ray"}),
                                       sessions=ray_sessions(cluster.address)))  # fmt: skip
        again = asyncio.run(run_study(options.model_copy(update={"run_id": "ray"}),
                                      sessions=ray_sessions(cluster.address)))  # fmt: skip

    assert (on_ray.sessions, on_ray.page_failures) == (local.sessions, local.page_failures) == (2, [])
    assert on_ray.summary == local.summary
    assert (again.summary.called, again.sessions) == (0, 0)
    mine = read_records(on_ray.run_dir / CALLS_FILE).records
    theirs = {r.cell: r for r in read_records(local.run_dir / CALLS_FILE).records}
    assert len(mine) == len(theirs) == local.summary.planned
    assert sorted(map(_comparable, mine), key=str) == sorted(map(_comparable, theirs.values()), key=str)
    assert sum(bool(r.verdict and r.verdict.correct) for r in mine) > 0
    # Offline counts only: the fake API's own count goes by characters, and browser-use's indexed DOM holds a
    # number or two that differ from one browser launch to the next, on one machine as on two.
    offline = [{c: (t.method, t.offline, t.o200k_full, t.o200k_empty) for c, t in read_tokens(run).items()}
               for run in (on_ray.run_dir, local.run_dir)]  # fmt: skip
    assert offline[0] == offline[1] and len(offline[0]) == len(mine)
    for record in mine:
        assert record.verdict is not None and record.verdict.screenshot is not None
        shot = (on_ray.run_dir / record.verdict.screenshot).read_bytes()
        assert shot == (local.run_dir / record.verdict.screenshot).read_bytes()
    assert read_page_failures(on_ray.run_dir) == []
