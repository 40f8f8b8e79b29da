"""``capreplay report`` on a real run folder: ``capreplay study run`` against :class:`FakeLLM` (the fixtures and
helpers of ``tests/support/study_run.py``), two repeats of one page, gold READ answers in the first repeat
and on one task in the second, wrong ACT answers throughout. The tables and the plots must match the records.
"""

from __future__ import annotations

import io
import json
import statistics
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from capreplay.cli import main
from capreplay.models.task import ReadTask
from capreplay.report.plots import HEIGHT, WIDTH, PagePoint, colours, tokens_accuracy_layout
from capreplay.study.answers.prompt import prompt_texts
from capreplay.study.run_files import CALLS_FILE, read_records, read_tokens
from capreplay.testing.fake_llm import Received
from tests.support import study_run

PAGE = "login"
REPEATS = 2
STILL_RIGHT = "login.read.1"
"""The one READ task answered right in the second repeat too."""


@pytest.fixture
def run_dir(results: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A run folder made by ``capreplay study run`` against the fake model."""
    study = study_run.study_of(results)
    gold = {prompt_texts(study.protocol, t, name)[1]: t for t in study.tasks if isinstance(t, ReadTask)
            for name in study.protocol.representations}  # fmt: skip
    wrong_act = {prompt_texts(study.protocol, t, name)[1]: study_run.WRONG_ACT[name] for t in study.tasks
                 if t.kind == "ACT" for name in study.protocol.representations}  # fmt: skip
    seen: Counter[str] = Counter()

    def script(received: Received) -> str:
        key = study_run.answer_key(received)
        for after, answer in wrong_act.items():
            if key.endswith(after):
                return json.dumps(answer)
        after, task = next((after, task) for after, task in gold.items() if key.endswith(after))
        seen[after] += 1
        # A READ prompt is the same for every representation but the page, and repeats run one after the
        # other: a task's first sightings, one per representation, are the first repeat.
        right = seen[after] <= len(study.protocol.representations) or task.id == STILL_RIGHT
        return json.dumps({"answer": task.answer if right else "zzz wrong"})

    with study_run.fake_llm(script) as fake:
        assert main(["study", "run", "--registration", study_run.REGISTRATION, "--run-id", "rep",
                     "--results", str(results), "--pages", PAGE, "--repeats", str(REPEATS),
                     "--base-url", fake.base_url]) == 0  # fmt: skip
    capsys.readouterr()
    return results / "runs" / "rep"


@pytest.mark.browser
def test_report_writes_tables_and_plots_that_match_the_records(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    assert main(["report", str(run_dir), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed == (out / "report.md").read_text() + f"wrote {out}\n"

    for name in ("tokens_vs_accuracy.png", "tokens_per_page.png"):
        data = (out / name).read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
        with Image.open(io.BytesIO(data)) as image:
            image.verify()
        with Image.open(io.BytesIO(data)) as image:
            assert (image.format, image.size) == ("PNG", (WIDTH, HEIGHT))
            assert len(image.getcolors(1 << 16) or []) > 10  # drawn on, not a blank canvas

    records = read_records(run_dir / CALLS_FILE).records
    tokens = read_tokens(run_dir)
    study = study_run.study_of(run_dir.parent.parent)
    kinds = {t.id: t.kind for t in study.tasks}
    names = list(study.protocol.representations)
    assert len(records) == REPEATS * 8 * len(names)
    report = json.loads((out / "report.json").read_text())
    assert report["repeats"] == REPEATS
    assert [row["representation"] for row in report["study"]["rows"]] == names

    spreads = {(s["representation"], s["kind"]): s for s in report["over_repeats"]}
    for name in names:
        # READ: all 5 right in the first repeat, 1 of 5 in the second; ACT: all wrong.
        read = spreads[name, "READ"]
        assert read["per_repeat"] == [1.0, 0.2]
        assert read["mean"] == pytest.approx(0.6)
        half = 12.706 * statistics.stdev([1.0, 0.2]) / 2**0.5  # t(1) from the printed table
        assert (read["low"], read["high"]) == (pytest.approx(max(0, 0.6 - half)), pytest.approx(min(1, 0.6 + half)))
        assert spreads[name, "ACT"]["per_repeat"] == [0.0, 0.0]
        assert spreads[name, "ACT"]["low"] == spreads[name, "ACT"]["high"] == 0.0
        assert spreads[name, "all"]["per_repeat"] == [5 / 8, 1 / 8]
        row = next(r for r in report["study"]["rows"] if r["representation"] == name)
        assert (row["read"]["correct"], row["read"]["calls"], row["act"]["correct"], row["act"]["calls"]) == (
            6,
            10,
            0,
            6,
        )
        mine = [r for r in records if r.cell.representation == name]
        mean_tokens = sum(tokens[r.cell].offline for r in mine) / len(mine)
        assert row["mean_tokens_o200k"] == pytest.approx(mean_tokens)
        (point,) = [p for p in report["pages"] if p["representation"] == name]
        assert (point["page"], point["accuracy"]) == (PAGE, pytest.approx(6 / 16))
        assert point["tokens"] == pytest.approx(mean_tokens)
        assert all(kinds[r.cell.task] in ("READ", "ACT") for r in mine)

    # the scatter plot shows each representation's one point at accuracy 6/16: y = 550 - 500 * 0.375
    with Image.open(out / "tokens_vs_accuracy.png") as image:
        rgb = image.convert("RGB")
    layout = tokens_accuracy_layout([PagePoint.model_validate(p) for p in report["pages"]])
    assert sorted((m.series, m.item) for m in layout.marks) == sorted((name, PAGE) for name in names)
    for mark in layout.marks:
        assert mark.box is not None and (mark.box[1] + mark.box[3]) / 2 == pytest.approx(362.5)
        x = round((mark.box[0] + mark.box[2]) / 2)
        covers = [box for other in layout.marks if other != mark
                  for box in (other.box, other.label.box if other.label else None) if box is not None]  # fmt: skip
        assert rgb.getpixel((x, 362)) == colours(names)[mark.series] or any(
            box[0] <= x <= box[2] and box[1] <= 362 <= box[3] for box in covers
        )  # a dot may hide under another representation's dot or label at nearly the same tokens

    markdown = (out / "report.md").read_text()
    assert "| representation | calls | tokens (o200k) |" in markdown  # the study's own table, reused
    assert "| raw_html | 16 |" in markdown
    assert "| raw_html | 0.60 [" in markdown and "(1.00, 0.20) | 0.00 [0.00, 0.00] (0.00, 0.00) |" in markdown
    assert f"{mean_tokens:,.0f} / 0.38" in markdown
    assert "![tokens against accuracy](tokens_vs_accuracy.png)" in markdown


def test_report_of_a_folder_that_is_no_run_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "run.json" in err and "not a study run folder" in err
