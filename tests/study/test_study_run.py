"""``capreplay study run`` and ``study report`` end to end: a real registration, the committed study snapshot
served offline to Chromium and browser-use, the real Anthropic SDK over real HTTP to :class:`FakeLLM`, and
answers scored on the live page.

The fake runs in a thread of its own, so the command line's ``main()`` (which runs its own event loop) can
call it. Its request log shows which cells were called, and how often.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from capreplay.cli import main
from capreplay.models.task import ActTask, Representation
from capreplay.study.answers.prompt import prompt_texts
from capreplay.study.records import RunRecord
from capreplay.study.run.execute import RunOptions, run_study
from capreplay.study.run_files import CALLS_FILE, read_records, read_tokens
from capreplay.testing.fake_llm import Received, Reply
from tests.support.study_run import REGISTRATION, WRONG_ACT, answer_key, fake_llm, study_of

PAGES = ["login", "embed"]
CALLS = 2 * 8 * 7  # pages x tasks per page x representations, one repeat
def records(run: Path) -> list[RunRecord]:
    return read_records(run / CALLS_FILE).records


@dataclass(frozen=True)
class Target:
    """An ACT target as a person reads it off the page, written by hand: how each representation names it."""

    selector: str
    role: str
    name: str
    point: tuple[float, float]
    index: str
    """The indexed DOM's line of the element, as a pattern whose group is its index."""


TARGETS = {
    "login.act.1": Target("#email", "textbox", "Email address", (640, 276), r"\[(\d+)\]<input id=email "),
    "login.act.2": Target("button.toggle-password", "button", "Show password", (842, 344),
                          r"\[(\d+)\]<button aria-label=Show password "),
    "login.act.3": Target("#cloudline-continue", "button", "Continue with Cloudline ID", (601, 583),
                          r"\[(\d+)\]<button id=cloudline-continue "),
    "embed.act.1": Target("#report-hazard", "button", "Report a hazard", (139, 660),
                          r"\[(\d+)\]<button id=report-hazard "),
    "embed.act.2": Target("#subscribe", "button", "Subscribe to alerts", (739, 608), r"\[(\d+)\]<button id=subscribe "),
    "embed.act.3": Target("button.apply", "button", "Apply code", (129, 378), r"\[(\d+)\]<button />\s*Apply code"),
}  # fmt: skip
NOT_REPRESENTABLE = {
    ("login.act.2", "markdown"),  # its name is an aria-label: no text shows it
    *((task, name) for task in ("login.act.3", "embed.act.1", "embed.act.2", "embed.act.3")
      for name in ("raw_html", "markdown", "accessibility_tree")),  # inside an iframe or a closed shadow root
    ("embed.act.3", "aria_ai"),  # Playwright's snapshot does not enter a closed shadow root
}  # fmt: skip
"""The (ACT task, representation) pairs whose representation does not show the target, by reading the pages."""


def perfect_act(task: str, representation: str, shown: str) -> dict[str, Any]:
    """The answer a careful reader of ``shown`` (the prompt, page included) gives; a guess where it lacks the target."""
    target = TARGETS[task]
    quoted = re.escape(f'{target.role} "{target.name}"')
    found: dict[str, Callable[[], dict[str, Any]]] = {
        "raw_html": lambda: {"selector": target.selector},
        "markdown": lambda: {"text": target.name},
        "accessibility_tree": lambda: {"role": target.role, "name": target.name},
        "screenshot": lambda: {"x": target.point[0], "y": target.point[1]},
        "indexed_dom": lambda: {"index": int(_group(target.index, shown))},
        "aria_ai": lambda: {"ref": _group(quoted + r" \[ref=(\w+)\]", shown, default="e1")},
        "stagehand_snapshot": lambda: {"id": _group(
            r"\[(\d+-\d+)\] " + re.escape(f"{target.role}: {target.name}") + "$", shown)},
    }  # fmt: skip
    return found[representation]()


def _group(pattern: str, text: str, default: str | None = None) -> str:
    match = re.search(pattern, text, re.MULTILINE)
    if match is None:
        assert default is not None, f"nothing in the prompt matches {pattern!r}"
        return default
    return match.group(1)


@pytest.mark.browser
def test_perfect_answers_score_correct_and_the_report_matches_the_records(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = study_of(results)
    cells = {prompt_texts(study.protocol, task, name)[1]: (task, name)
             for task in study.tasks if task.page in PAGES for name in study.protocol.representations}  # fmt: skip

    def script(received: Received) -> str:
        # The answers are read off each prompt by hand-written patterns, so indices are those of the load shown.
        task, name = next(cell for after, cell in cells.items() if answer_key(received).endswith(after))
        answer = perfect_act(task.id, name, received.prompt) if isinstance(task, ActTask) else {"answer": task.answer}
        return "Here it is:\n" + json.dumps(answer)

    with fake_llm(script) as fake:
        result = asyncio.run(run_study(RunOptions(registration=REGISTRATION, run_id="perfect", results=results,
                                                  base_url=fake.base_url, pages=PAGES, repeats=1)))
    assert (result.summary.called, result.summary.errors, result.summary.unparseable, result.sessions) == (
        CALLS, {}, 0, 2)
    assert len(fake.calls("messages")) == CALLS
    done = records(result.run_dir)
    assert len(done) == CALLS
    kinds = {t.id: t.kind for t in study.tasks}
    for record in done:
        assert record.verdict is not None and record.usage is not None, record.cell.key()
        if kinds[record.cell.task] == "READ":
            assert record.verdict.correct, record.cell.key()
        else:
            # A guess at a target the representation does not show may still hit (an aria-label is a name the
            # scorer's text strategy finds), so only the shown ones must score.
            shown = (record.cell.task, record.cell.representation) not in NOT_REPRESENTABLE
            assert record.verdict.representable == shown, record.cell.key()
            assert record.verdict.correct or not shown, record.cell.key()

    tokens = read_tokens(result.run_dir)
    assert set(tokens) == {r.cell for r in done}
    screenshot = [t for t in tokens.values() if t.cell.representation == "screenshot"]
    # 1280x800 by Anthropic's rule; the fake counts images as ceil(pixels / 750), both by count and usage
    assert {(t.method, t.offline, t.api_count, t.api_usage) for t in screenshot} == {
        ("image_rule", 1334, math.ceil(1280 * 800 / 750), math.ceil(1280 * 800 / 750))}
    assert all(t.method == "o200k_base" and t.offline > 100 for t in tokens.values() if t not in screenshot)

    # `study report` is `report RUN_DIR -o RUN_DIR`: the same Markdown, JSON and plots, in the run folder
    assert main(["study", "report", str(result.run_dir)]) == 0
    printed = capsys.readouterr().out
    assert printed == (result.run_dir / "report.md").read_text() + f"wrote {result.run_dir}\n"
    assert printed.splitlines()[4].startswith("| representation | calls | tokens (o200k) |")
    assert (result.run_dir / "tokens_vs_accuracy.png").read_bytes().startswith(b"\x89PNG")
    report = json.loads((result.run_dir / "report.json").read_text())["study"]
    assert [row["representation"] for row in report["rows"]] == list(study.protocol.representations)
    for row in report["rows"]:
        name: Representation = row["representation"]
        mine = [r for r in done if r.cell.representation == name]
        act = [r for r in mine if kinds[r.cell.task] == "ACT"]
        assert row["calls"] == 16 and row["read"]["correct"] == row["read"]["calls"] == 10
        assert row["act"]["correct"] == sum(bool(r.verdict and r.verdict.correct) for r in act)
        assert row["act"]["calls"] == 6
        assert row["not_representable"] == sum(bool(r.verdict and not r.verdict.correct) for r in act)
        assert row["mean_tokens_o200k"] == pytest.approx(sum(tokens[r.cell].offline for r in mine) / 16)
        billed = sum(r.usage.input_tokens for r in mine if r.usage)
        assert row["input_tokens"] == billed
        assert row["tokens_per_correct"] == pytest.approx(billed / (10 + row["act"]["correct"]))
        assert (row["errors"], row["unparseable"]) == (0, 0)
    tags = {(row["representation"], row["location"]) for row in report["by_location"]}
    assert ("indexed_dom", "shadow_closed") in tags and ("raw_html", "attribute_only") in tags


@pytest.mark.browser
def test_wrong_unparseable_and_failed_calls_then_resume(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = study_of(results)
    protocol = study.protocol
    # ACT tasks: their prompts differ by representation (a READ prompt is the same for all five but the page)
    unparseable_key = prompt_texts(protocol, study.task("login.act.2"), "accessibility_tree")[1]
    failing_key = prompt_texts(protocol, study.task("embed.act.1"), "markdown")[1]
    wrong = {prompt_texts(protocol, t, name)[1]: WRONG_ACT[name] if t.kind == "ACT" else {"answer": "zzz wrong"}
             for t in study.tasks for name in protocol.representations}  # fmt: skip

    def script(received: Received) -> Reply | str:
        key = answer_key(received)
        if key.endswith(unparseable_key):
            return "I cannot tell from this page."
        if key.endswith(failing_key):
            return Reply(status=500, message="scripted outage")
        return next(json.dumps(answer) for after, answer in wrong.items() if key.endswith(after))

    command = ["study", "run", "--registration", REGISTRATION, "--run-id", "wrong", "--results", str(results),
               "--pages", ",".join(PAGES), "--repeats", "1"]  # fmt: skip
    run = results / "runs" / "wrong"
    with fake_llm(script) as fake:
        assert main([*command, "--base-url", fake.base_url]) == 0
        assert capsys.readouterr().out.startswith(
            f"run wrong: {CALLS} cells planned, 0 already recorded, {CALLS} called in 2 page sessions; "
            "errors: api_status 1; unparseable: 1\n")
        done = {r.cell.key(): r for r in records(run)}
        assert len(done) == CALLS
        failed = done["0/embed/embed.act.1/markdown"]
        assert (failed.error_kind, failed.answer_text, failed.verdict and failed.verdict.reason) == (
            "api_status", None, "error")
        # No retry: the failing prompt reached the fake exactly once.
        assert sum(answer_key(r).endswith(failing_key) for r in fake.calls("messages")) == 1
        garbled = done["0/login/login.act.2/accessibility_tree"]
        assert garbled.error_kind is None and garbled.unparseable == "no JSON object in the reply"
        assert garbled.verdict is not None and garbled.verdict.reason == "unparseable"
        assert not any(r.verdict and r.verdict.correct for r in done.values())
        assert {r.verdict.reason for r in done.values() if r.verdict} >= {"wrong_answer", "not_representable"}

        # The same command again calls nothing; with its last 5 records lost, it calls exactly those 5.
        assert main([*command, "--base-url", fake.base_url]) == 0
        assert f"{CALLS} already recorded, 0 called in 0 page sessions" in capsys.readouterr().out
        assert len(fake.calls("messages")) == CALLS
        lines = (run / CALLS_FILE).read_bytes().splitlines(keepends=True)
        (run / CALLS_FILE).write_bytes(b"".join(lines[:-5]) + lines[-5][:40])  # and a torn line
        lost = {RunRecord.model_validate_json(line).cell for line in lines[-5:]}
        assert main([*command, "--base-url", fake.base_url]) == 0
        assert f"{CALLS - 5} already recorded, 5 called in " in capsys.readouterr().out
        assert len(fake.calls("messages")) == CALLS + 5
    again = records(run)
    assert len(again) == CALLS and {r.cell for r in again[-5:]} == lost

    assert main(["study", "report", str(run), "--json"]) == 0
    rows = {row["representation"]: row for row in json.loads(capsys.readouterr().out)["study"]["rows"]}
    assert (rows["markdown"]["errors"], rows["accessibility_tree"]["unparseable"]) == (1, 1)
    assert sum(row["read"]["correct"] + row["act"]["correct"] for row in rows.values()) == 0
    assert rows["screenshot"]["tokens_per_correct"] is None


def test_a_changed_tasks_file_refuses_to_start(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = results.parent / "tasks.json"
    tasks.write_text(tasks.read_text().replace("What is the minimum password length?", "How long at least?"))
    assert main(["study", "run", "--registration", REGISTRATION, "--results", str(results),
                 "--base-url", "http://127.0.0.1:9"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"capreplay study: {results / 'registrations' / 'e2e.json'}: inputs changed since "
                          "registration e2e: tasks file changed; ")
    assert "study pages or tasks changed" in err
    assert not (results / "runs").exists()
