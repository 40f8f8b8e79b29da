"""`capreplay run --shard I/N` from the command line: two shards of a two-task gold run, resumed, merged, judged
and reported exactly as the same plan run in one piece; `run` without a step is `run start`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from capreplay.cli import build_parser
from tests.support.cli import run
from tests.support.world_sample import GOOD_PATH, sample_task, write_tasks


def capreplay(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return run(list(args), timeout=timeout)


def test_run_without_a_step_is_run_start() -> None:
    parser = build_parser()
    words = ["--agent", "gold", "--shard", "3/8", "--run-id", "x"]
    plain = parser.parse_args(["run", *words])
    assert vars(plain) == vars(parser.parse_args(["run", "start", *words]))
    assert plain.step == "start" and plain.shard == (3, 8) and plain.agent == ["gold"]
    merged = parser.parse_args(["-v", "run", "merge", "a", "b"])
    assert merged.step == "merge" and merged.verbose


def test_judge_without_a_step_is_judge_score() -> None:
    parser = build_parser()
    for words in (["results/runs/x"], ["--cache", "c", "results/runs/x"], ["results/runs/x", "--cache", "c"]):
        plain = parser.parse_args(["judge", *words])
        assert plain.step == "score" and vars(plain) == vars(parser.parse_args(["judge", "score", *words]))


def test_a_verbs_help_is_its_own_and_no_step_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    with pytest.raises(SystemExit) as ended:
        parser.parse_args(["run", "--help"])
    assert ended.value.code == 0 and "start" in capsys.readouterr().out
    with pytest.raises(SystemExit) as ended:
        parser.parse_args(["judge"])
    assert ended.value.code == 2 and "STEP" in capsys.readouterr().err


def test_merge_from_the_command_line_writes_where_it_is_told(tmp_path: Path) -> None:
    from capreplay.agents.run import read_agent_run
    from tests.support.shards import make_shards, whole_run

    info = whole_run("exp")
    folders = make_shards(tmp_path / "shards", info, 3)
    done = capreplay("run", "merge", *map(str, folders), "--results", str(tmp_path / "elsewhere"), "--run-id", "all")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "elsewhere" / "runs" / "all"
    assert done.stdout.splitlines() == [f"run all: 3 shards merged, {len(info.planned)} episodes, "
                                        f"{2 * len(info.planned)} files", f"records in {out}; judge them: "
                                        f"capreplay judge {out}"]  # fmt: skip
    assert read_agent_run(out) == info.model_copy(update={"run_id": "all"})
    assert not (tmp_path / "shards" / "runs" / "exp").exists()


def _verdicts(run_dir: Path) -> list[dict[str, Any]]:
    """Each episode's verdict, without what differs between two judgings (times)."""
    lines = (run_dir / "verdicts.jsonl").read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k in ("episode", "passed", "score", "scored", "leaves")}
            for line in lines]  # fmt: skip


def _judge(run_dir: Path, cache: Path) -> dict[str, Any]:
    judged = capreplay("judge", str(run_dir), "--cache", str(cache), "--json")
    assert judged.returncode == 0, judged.stderr
    metrics: dict[str, Any] = json.loads(judged.stdout)
    return metrics


@pytest.mark.browser
@pytest.mark.slow
def test_two_shards_merged_judge_like_the_run_made_in_one_piece(tmp_path: Path) -> None:
    tasks_file = write_tasks(tmp_path, [sample_task("first-product", GOOD_PATH), sample_task("again", GOOD_PATH)])
    results = tmp_path / "results"
    common = ["run", "--agent", "gold", "--tasks", str(tasks_file), "--task", "first-product", "--task", "again",
              "--repeats", "1", "--results", str(results)]  # fmt: skip
    runs = results / "runs"
    for index in (0, 1):
        ran = capreplay(*common, "--shard", f"{index}/2")
        assert ran.returncode == 0, ran.stderr
        assert "2 episodes planned" not in ran.stdout and "1 episodes planned, 0 already recorded, 1 run" in ran.stdout
        assert f"capreplay run merge {runs / 'gold'}.shard-*-of-2" in ran.stdout
    shards = [runs / "gold.shard-0-of-2", runs / "gold.shard-1-of-2"]
    tasks = [json.loads((s / "episodes.jsonl").read_text())["key"]["task"] for s in shards]
    assert sorted(tasks) == ["again", "first-product"]  # one task each

    # rerunning a shard's command resumes it: its episode is recorded, nothing runs again
    again = capreplay(*common, "--shard", "0/2")
    assert again.returncode == 0, again.stderr
    assert "1 episodes planned, 1 already recorded, 0 run" in again.stdout

    merged = capreplay("run", "merge", *map(str, shards))
    assert merged.returncode == 0, merged.stderr
    assert "run gold: 2 shards merged, 2 episodes" in merged.stdout
    whole = runs / "gold"
    one_piece_ran = capreplay(*common, "--run-id", "one-piece")
    assert one_piece_ran.returncode == 0, one_piece_ran.stderr
    one_piece = runs / "one-piece"

    # the same run.json but for its name and time, the same episodes in the same order
    info, single = (json.loads((d / "run.json").read_text()) for d in (whole, one_piece))
    drop = ("run_id", "created_at")
    assert {k: v for k, v in info.items() if k not in drop} == {k: v for k, v in single.items() if k not in drop}
    keys = [json.loads(line)["key"] for line in (whole / "episodes.jsonl").read_text().splitlines()]
    assert keys == info["planned"] == single["planned"]
    for rec in map(json.loads, (whole / "episodes.jsonl").read_text().splitlines()):
        assert rec["status"] == "answered" and rec["steps"]
        for step in rec["steps"]:
            assert (whole / step["screenshot"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    cache = tmp_path / "cache"
    metrics = _judge(whole, cache)
    assert _judge(one_piece, cache)["agents"] == metrics["agents"]
    (gold,) = metrics["agents"]
    assert gold["scored"] == 2 and gold["success_rate"]["value"] == 1.0  # the gold path answers both tasks right
    assert _verdicts(whole) == _verdicts(one_piece)
    assert [v["passed"] for v in _verdicts(whole)] == [True, True]

    reported = capreplay("report", str(whole), "-o", str(tmp_path / "report"))
    assert reported.returncode == 0, reported.stderr
    assert os.listdir(tmp_path / "report")
