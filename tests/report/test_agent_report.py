"""``capreplay report`` on agent runs: hand-built records of two agents on one task over three repeats, with
expected figures worked out by hand (below), the per-type plot, and the command on a run folder.

gold, partial completion per repeat 1.0, 1.0, 0.7: mean 0.9, sd sqrt(0.03), t(2) 4.303 * 0.1 = 0.4303, so
[0.47, 1.00] after clipping; its click leaf fails in repeat 2, so success and action score are 1, 1, 0.
browser_use: repeat 1 is unscored, so repeats 0 and 2 only: partial 0.6 and 1.0 (mean 0.8), success and action
0 and 1; its times 100, 50, 90 s (mean 80, median 90), output tokens 1,000, 200, 3,000 (mean 1,400), calls 5,
1, 9 (mean 5).
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from capreplay.cli import main
from capreplay.judge.verdict import EpisodeVerdict, LeafVerdict
from capreplay.models.episode import AgentRunInfo, EpisodeKey, EpisodeRecord
from capreplay.models.workflow import WorkflowTask
from capreplay.report.agents import (
    AgentReport,
    agent_report_markdown,
    build_agent_report,
    per_type_png,
)
from capreplay.report.plots import HEIGHT, LEFT, RIGHT, WIDTH, colours

HOME = "https://www.shop.test/"
AGENTS = ["gold", "browser_use"]
STARTED = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def task_dict() -> dict[str, Any]:
    """A valid workflow task: a perception point on the shop (PT18), an action point on the news site (AT03)."""
    return {
        "id": "t1",
        "description": "I want the name of the shop's first product and the news page that mentions it.",
        "sites": ["www.shop.test", "www.news.test"],
        "flow": "sequential",
        "start_url": HOME,
        "covered_points": [
            {"id": "p1", "type": "perception", "code": "PT18", "site": "www.shop.test", "description": "read a card"},
            {"id": "a1", "type": "action", "code": "AT03", "site": "www.news.test", "description": "open a menu"},
        ],
        "outputs": [
            {"name": "product", "type": "text", "role": "user_value", "description": "the first product's name"},
            {"name": "product_url", "type": "url", "role": "provenance_url", "description": "where it was read"},
        ],
        "rubric": {
            "id": "root",
            "description": "the product is named",
            "children": [
                {"id": "named", "description": "the product", "critical": True, "kind": "perception", "point": "p1",
                 "check": {"check": "claim_on_page", "field": "product", "url_field": "product_url"}},
                {"id": "clicked", "description": "the menu was opened", "kind": "action", "point": "a1",
                 "check": {"check": "url_in_snapshot", "field": "product_url"}},
                {"id": "cited", "description": "the page is archived", "kind": "other",
                 "check": {"check": "url_in_snapshot", "field": "product_url"}},
            ],
        },
        "gold_path": [
            {"type": "read", "output": "product", "selector": "#products .product h3"},
            {"type": "read", "output": "product_url", "source": "url"},
        ],
    }  # fmt: skip


def run_info(tasks_file: str = "tasks.json") -> AgentRunInfo:
    return AgentRunInfo(
        run_id="agents-1", registration=None, created_at=STARTED, tasks_file=tasks_file, snapshot="world",
        snapshot_id="0" * 64, agents=AGENTS, agent_models={"gold": None, "browser_use": {"model": "claude-test"}},
        seed=7, repeats=3, step_limit=10, episode_timeout_s=120,
        planned=[EpisodeKey(repeat=r, task="t1", agent=a) for r in range(3) for a in AGENTS],
    )  # fmt: skip


def episode(agent: str, repeat: int, duration_s: float, status: str, output_tokens: int = 0, calls: int = 0,
            off: tuple[tuple[str, str], ...] = ()) -> EpisodeRecord:  # fmt: skip
    requests = [{"method": "GET", "url": HOME, "result": "hit", "status": 200}]
    requests += [{"method": "GET", "url": url, "result": result} for url, result in off]
    return EpisodeRecord.model_validate({
        "key": {"repeat": repeat, "task": "t1", "agent": agent}, "started_at": STARTED, "duration_s": duration_s,
        "status": status, "usage": {"input_tokens": 10 * output_tokens, "output_tokens": output_tokens, "calls": calls},
        "requests": requests, "start_url": HOME,
    })  # fmt: skip


def episodes() -> list[EpisodeRecord]:
    return [
        episode("gold", 0, 10, "answered"),
        episode("browser_use", 0, 100, "answered", 1000, 5,
                (("https://www.shop.test/missing?q=1", "miss"), ("https://ads.test/x", "blocked"))),
        episode("gold", 1, 14, "answered", off=(("https://ads.test/pixel?a|b", "blocked"),)),
        episode("browser_use", 1, 50, "failed", 200, 1),
        episode("gold", 2, 40, "timeout"),
        episode("browser_use", 2, 90, "answered", 3000, 9),
    ]  # fmt: skip


def verdict(agent: str, repeat: int, score: float | None, named: bool = True, clicked: bool = True,
            off_snapshot: bool = False) -> EpisodeVerdict:  # fmt: skip
    base: dict[str, Any] = {"episode": f"{agent}/{repeat}/t1", "task": "t1", "agent": agent, "repeat": repeat,
                            "off_snapshot": off_snapshot}  # fmt: skip
    if score is None:
        return EpisodeVerdict.model_validate({**base, "scored": False, "unscored": "no answer to score"})
    leaves = [LeafVerdict(node="named", kind="perception", point="p1", check="claim_on_page", critical=True,
                          passed=named, reason="-"),
              LeafVerdict(node="clicked", kind="action", point="a1", check="url_in_snapshot", critical=False,
                          passed=clicked, reason="-"),
              LeafVerdict(node="cited", kind="other", check="url_in_snapshot", critical=False, passed=True,
                          reason="-")]  # fmt: skip
    return EpisodeVerdict(**base, scored=True, leaves=leaves, score=score, passed=score == 1.0)


def verdicts() -> list[EpisodeVerdict]:
    return [
        verdict("gold", 0, 1.0),
        verdict("browser_use", 0, 0.6, clicked=False, off_snapshot=True),
        verdict("gold", 1, 1.0, off_snapshot=True),
        verdict("browser_use", 1, None),
        verdict("gold", 2, 0.7, clicked=False),
        verdict("browser_use", 2, 1.0),
    ]


def tasks() -> list[WorkflowTask]:
    return [WorkflowTask.model_validate(task_dict())]


def judged_report() -> AgentReport:
    return build_agent_report(run_info(), episodes(), verdicts(), tasks())


# ---------------------------------------------------------------------------------------------- pure report


def test_the_report_holds_the_hand_worked_figures() -> None:
    report = judged_report()
    assert (report.agents, report.tasks, report.repeats, report.planned, report.recorded) == (AGENTS, 1, 3, 6, 6)
    gold, browser_use = report.activity
    assert (gold.agent, gold.episodes, gold.off_snapshot) == ("gold", 3, 1)
    assert gold.mean_duration_s == pytest.approx(64 / 3) and gold.median_duration_s == 14
    assert (gold.mean_output_tokens, gold.mean_calls) == (0, 0)
    assert (gold.answered, gold.failed, gold.timeout, gold.step_limit) == (2, 0, 1, 0)
    assert (browser_use.mean_duration_s, browser_use.median_duration_s) == (80, 90)
    assert (browser_use.mean_output_tokens, browser_use.mean_input_tokens, browser_use.mean_calls) == (1400, 14000, 5)
    assert (browser_use.answered, browser_use.failed, browser_use.timeout, browser_use.step_limit) == (2, 1, 0, 0)

    assert report.metrics is not None
    assert [m.agent for m in report.metrics.agents] == AGENTS  # the run's order, not the metrics' name order
    m_gold, m_bu = report.metrics.agents
    assert m_gold.partial_completion.per_repeat == pytest.approx([1.0, 1.0, 0.7])
    assert m_gold.partial_completion.mean == pytest.approx(0.9)
    assert m_gold.partial_completion.low == pytest.approx(0.9 - 4.303 * 0.1)
    assert m_gold.partial_completion.high == 1.0
    assert (m_bu.scored, m_bu.unscored, m_bu.repeats) == (2, 1, 3)
    assert m_bu.partial_completion.per_repeat == pytest.approx([0.6, 1.0])
    assert m_bu.by_code["AT03"].mean == 0.5 and m_bu.by_code["AT03"].n == 2
    assert report.unjudged == []
    assert [(s.episode, s.url, s.result, s.requests) for s in report.strayed] == [
        ("browser_use/0/t1", "https://www.shop.test/missing?q=1", "miss", 2),
        ("gold/1/t1", "https://ads.test/pixel?a|b", "blocked", 1),
    ]


def test_the_markdown_has_a_row_per_agent_and_the_tables_by_type_and_site() -> None:
    markdown = agent_report_markdown(judged_report())
    assert markdown.startswith("# Agent run agents-1\n\ngold, browser_use on 1 task(s), 3 repeat(s): 6 of 6 planned")
    assert (
        "| agent | partial completion | success rate | action score | perception score | episodes | scored | "
        "unscored | off-snapshot | mean time (s) | median time (s) | mean output tokens | mean model calls | "
        "failed | timeout | step limit |"
    ) in markdown
    assert (
        "| gold | 0.90 [0.47, 1.00] | 0.67 [0.00, 1.00] | 0.67 [0.00, 1.00] | 1.00 [1.00, 1.00] | 3 | 3 | 0 | 1 | "
        "21.3 | 14.0 | 0 | 0.0 | 0 | 1 | 0 |"
    ) in markdown
    assert (
        "| browser_use | 0.80 [0.00, 1.00] | 0.50 [0.00, 1.00] | 0.50 [0.00, 1.00] | 1.00 [1.00, 1.00] | 3 | 2 | "
        "1 | 1 | 80.0 | 90.0 | 1,400 | 5.0 | 1 | 0 | 0 |"
    ) in markdown
    assert "| type | gold | browser_use |" in markdown
    assert "| AT03 | 0.67 (n=3) | 0.50 (n=2) |" in markdown and "| PT18 | 1.00 (n=3) | 1.00 (n=2) |" in markdown
    assert "| www.news.test | 0.67 (n=3) | 0.50 (n=2) |" in markdown
    assert markdown.index("| www.shop.test |") < markdown.index("| (no point) | 1.00 (n=3) | 1.00 (n=2) |")
    assert "| browser_use/0/t1 | `https://www.shop.test/missing?q=1` | miss | 2 |" in markdown
    assert "| gold/1/t1 | `https://ads.test/pixel?a%7Cb` | blocked | 1 |" in markdown  # a "|" would split the cell
    assert "not judged yet" not in markdown and "![scores by covered-point type](per_type.png)" in markdown


def test_one_repeat_shows_values_without_intervals() -> None:
    first = [e for e in episodes() if e.key.repeat == 0]
    report = build_agent_report(run_info(), first, [v for v in verdicts() if v.repeat == 0], tasks())
    markdown = agent_report_markdown(report)
    assert "| gold | 1.00 | 1.00 | 1.00 | 1.00 | 1 | 1 | 0 | 0 | 10.0 | 10.0 |" in markdown
    assert "| browser_use | 0.60 | 0.00 | 0.00 | 1.00 | 1 | 1 | 0 | 1 | 100.0 | 100.0 | 1,000 | 5.0 |" in markdown
    assert "2 of 6 planned episodes recorded" in markdown


def test_an_unjudged_run_gets_the_time_and_status_table_and_says_how_to_judge_it() -> None:
    report = build_agent_report(run_info(), episodes(), None, [])
    assert report.metrics is None
    markdown = agent_report_markdown(report)
    assert "not judged yet: run `capreplay judge RUN_DIR`" in markdown
    assert "partial completion" not in markdown and "## By covered-point type" not in markdown
    assert (
        "| agent | episodes | off-snapshot | mean time (s) | median time (s) | mean output tokens | mean model calls "
        "| failed | timeout | step limit |"
    ) in markdown
    assert "| browser_use | 3 | 1 | 80.0 | 90.0 | 1,400 | 5.0 | 1 | 0 | 0 |" in markdown
    assert "| gold/1/t1 |" in markdown


def test_episodes_recorded_after_judging_are_named_as_unjudged() -> None:
    report = build_agent_report(run_info(), episodes(), verdicts()[:-1], tasks())
    assert report.unjudged == ["browser_use/2/t1"]
    assert "1 recorded episode(s) have no verdict" in agent_report_markdown(report)


def test_a_verdict_on_a_point_the_task_lacks_is_refused() -> None:
    bad = verdicts()
    bad[0] = bad[0].model_copy(update={"leaves": [bad[0].leaves[0].model_copy(update={"point": "p9"})]})
    with pytest.raises(ValueError, match="p9"):
        build_agent_report(run_info(), episodes(), bad, tasks())


# ---------------------------------------------------------------------------------------------- plot


def _longest_runs(data: bytes, colour: tuple[int, int, int]) -> list[int]:
    """The longest horizontal run of ``colour`` in each row of the image, longest rows first."""
    with Image.open(io.BytesIO(data)) as image:
        rgb = image.convert("RGB")
        pixels = rgb.load()
        assert pixels is not None
        runs = []
        for y in range(rgb.height):
            best = current = 0
            for x in range(rgb.width):
                current = current + 1 if pixels[x, y] == colour else 0
                best = max(best, current)
            runs.append(best)
    return sorted(runs, reverse=True)


def test_the_per_type_plot_is_a_png_with_bars_as_long_as_the_scores_and_the_same_bytes_each_time() -> None:
    data = per_type_png(judged_report())
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    with Image.open(io.BytesIO(data)) as image:
        image.verify()
    with Image.open(io.BytesIO(data)) as image:
        assert (image.format, image.size) == ("PNG", (WIDTH, HEIGHT))
    assert per_type_png(judged_report()) == data

    width = WIDTH - RIGHT - LEFT
    palette = colours(AGENTS)
    # gold scores 1.0 on PT18 (a bar across the whole axis) and 0.67 on AT03; browser_use at most 1.0 and 0.5
    gold_runs = [run for run in _longest_runs(data, palette["gold"]) if run > 20]  # not the legend's square
    assert abs(gold_runs[0] - width) <= 2
    assert any(abs(run - width * 2 / 3) <= 2 for run in gold_runs)
    bu_runs = [run for run in _longest_runs(data, palette["browser_use"]) if run > 20]
    assert any(abs(run - width / 2) <= 2 for run in bu_runs)

    unjudged = per_type_png(build_agent_report(run_info(), episodes(), None, []))
    assert unjudged != data and unjudged.startswith(b"\x89PNG")
    assert not [run for run in _longest_runs(unjudged, palette["gold"]) if run > 20]


# ---------------------------------------------------------------------------------------------- command


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """An agent run folder: run.json, episodes.jsonl, verdicts.jsonl, and the tasks file run.json names."""
    tasks_file = tmp_path / "tasks.json"
    tasks_file.write_text(json.dumps({
        "schema_version": 1, "snapshots": {"world": "world"},
        "workflows": {"snapshot": "world", "judge": {"model": {"model": "claude-test", "max_tokens": 1000}},
                      "repeats": 3, "seed": 7, "step_limit": 10, "episode_timeout_s": 120, "tasks": [task_dict()]},
    }))  # fmt: skip
    folder = tmp_path / "runs" / "agents-1"
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(run_info(str(tasks_file)).model_dump_json(indent=1))
    (folder / "episodes.jsonl").write_text("".join(e.model_dump_json() + "\n" for e in episodes()))
    (folder / "verdicts.jsonl").write_text("".join(v.model_dump_json() + "\n" for v in verdicts()))
    return folder


def test_report_of_an_agent_run_writes_the_markdown_json_and_plot(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    assert main(["report", str(run_dir), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    markdown = (out / "report.md").read_text()
    assert printed == markdown + f"wrote {out}\n"
    assert markdown == agent_report_markdown(judged_report())
    assert AgentReport.model_validate_json((out / "report.json").read_text()) == judged_report()
    assert (out / "per_type.png").read_bytes() == per_type_png(judged_report())
    assert sorted(p.name for p in out.iterdir()) == ["per_type.png", "report.json", "report.md"]  # no .tmp left


def test_report_of_an_unjudged_agent_run_goes_to_the_default_folder_without_the_tasks_file(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (run_dir / "verdicts.jsonl").unlink()
    (tmp_path / "tasks.json").unlink()  # only the scores by type need it
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(run_dir)]) == 0
    out = Path("results/reports/agents-1")
    assert capsys.readouterr().out.endswith(f"wrote {out}\n")
    assert "not judged yet: run `capreplay judge RUN_DIR`" in (out / "report.md").read_text()
    assert (out / "per_type.png").read_bytes().startswith(b"\x89PNG")


def test_report_of_a_folder_without_run_json_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "run.json" in err


def test_report_of_an_invalid_agent_run_json_exits_2_naming_the_field(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((run_dir / "run.json").read_text())
    del data["planned"]
    (run_dir / "run.json").write_text(json.dumps(data))
    assert main(["report", str(run_dir), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not an agent run's run.json: planned" in err
    assert not (tmp_path / "out").exists()


def test_report_of_a_damaged_verdicts_file_exits_2_naming_the_line(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with (run_dir / "verdicts.jsonl").open("a") as f:
        f.write('{"episode": "x"}\n')
    assert main(["report", str(run_dir), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "verdicts.jsonl: line 7 is not a verdict" in err
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------- by group


def _second_task() -> dict[str, Any]:
    """A one-site multi-hop task on the shop, with one leaf."""
    task = task_dict()
    task.update(id="t2", sites=["www.shop.test"], flow="multi_hop", covered_points=[])
    task["rubric"] = {"id": "root", "description": "cited", "children": [
        {"id": "cited", "description": "the page is archived", "critical": True, "kind": "other",
         "check": {"check": "url_in_snapshot", "field": "product_url"}}]}  # fmt: skip
    return task


def _t2_verdict(repeat: int, score: float) -> EpisodeVerdict:
    leaf = LeafVerdict(node="cited", kind="other", check="url_in_snapshot", critical=True, passed=score == 1.0,
                       reason="-")  # fmt: skip
    return EpisodeVerdict(episode=f"gold/{repeat}/t2", task="t2", agent="gold", repeat=repeat, scored=True,
                          leaves=[leaf], score=score, passed=score == 1.0)  # fmt: skip


def test_the_scores_per_site_flow_and_number_of_sites_are_the_hand_worked_ones() -> None:
    # gold: t1 scores 1.0, 1.0, 0.7 (passes in repeats 0 and 1), t2 1.0, 0.0, 1.0. Over the shop (both tasks)
    # the repeats' partial completion is 1.0, 0.5, 0.85 (mean 0.7833) and success 1, 0.5, 0.5 (mean 0.6667);
    # the news site and the sequential flow and two sites are t1 alone; multi_hop and one site are t2 alone.
    all_tasks = [*tasks(), WorkflowTask.model_validate(_second_task())]
    report = build_agent_report(run_info(), episodes(), verdicts() + [_t2_verdict(r, s) for r, s in
                                                                       ((0, 1.0), (1, 0.0), (2, 1.0))], all_tasks)
    gold = {(g.by, g.group): (g.tasks, next(m for m in g.metrics.agents if m.agent == "gold")) for g in report.groups}
    assert list(gold) == [("site", "www.news.test"), ("site", "www.shop.test"), ("flow", "multi_hop"),
                          ("flow", "sequential"), ("sites", "1"), ("sites", "2")]  # fmt: skip
    n, shop = gold[("site", "www.shop.test")]
    assert n == 2
    assert shop.partial_completion.per_repeat == pytest.approx([1.0, 0.5, 0.85])
    assert shop.success_rate.mean == pytest.approx(2 / 3)
    for key in (("site", "www.news.test"), ("flow", "sequential"), ("sites", "2")):
        n, only_t1 = gold[key]
        assert n == 1 and only_t1.partial_completion.per_repeat == pytest.approx([1.0, 1.0, 0.7])
        assert only_t1.success_rate.per_repeat == [1.0, 1.0, 0.0]
    for key in (("flow", "multi_hop"), ("sites", "1")):
        n, only_t2 = gold[key]
        assert n == 1 and only_t2.success_rate.per_repeat == [1.0, 0.0, 1.0]
    markdown = agent_report_markdown(report)
    for title in ("## By application (site)", "## By flow", "## By number of sites"):
        assert title in markdown
    assert "| multi_hop | 1 |" in markdown
