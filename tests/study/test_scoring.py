"""The pure parts of the study's ACT/READ path: answer formats, ARIA node lines, representability rules,
scoring, token counts of views, the self-test's verdict on its own checks, and task file loading."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from capreplay.cli.study import exit_status
from capreplay.errors import InputError
from capreplay.models.geometry import Box
from capreplay.models.task import ReadTask
from capreplay.study.answers.act import (
    IndexAnswer,
    PointAnswer,
    RoleAnswer,
    SelectorAnswer,
    TextAnswer,
    parse_act_answer,
)
from capreplay.study.answers.representable import Representability, act_representable, read_representable
from capreplay.study.answers.resolve import index_of, png_size, resolve_index, resolve_point
from capreplay.study.answers.score import Verdict, score_act, score_read
from capreplay.study.offline.selftest import SelftestCheck, SelftestReport, selftest_table
from capreplay.study.page.browser_use import IndexedDom, SelectorEntry
from capreplay.study.page.elements import ElementRef, Point, Unresolved
from capreplay.study.page.ground_truth import ResolvedTarget
from capreplay.study.page.stagehand import Snapshot
from capreplay.study.page.viewport_text import frame_clip
from capreplay.study.page.views import PageViews
from capreplay.study.representations import REPRESENTATIONS, get_representation
from capreplay.study.representations.accessibility_tree import parse_node
from capreplay.study.representations.aria_ai import refs_named
from capreplay.study.run.tasks import load_study_tasks
from capreplay.study.tokens.view_tokens import token_table, view_tokens

PAGE = "PAGE-TARGET"
FRAME = "FRAME-TARGET"
YES = Representability(representable=True, reason="shown")
NO = Representability(representable=False, reason="behind iframe_cross_site")


def _png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(out, "PNG")
    return out.getvalue()


def _views(**changes: object) -> PageViews:
    fields: dict[str, object] = {
        "url": "https://www.study.test/x",
        "raw_html": "<html><body><button aria-label='Copy link'><svg></svg></button><p>Ship\\_date</p></body></html>",
        "markdown": "Ship\\_date and Save\\_for\\_later",
        "accessibility_tree": '- main:\n  - button "Copy link"\n  - text: Details\n  - heading "Title" [level=1]',
        "aria_ai": '- main [ref=e1]:\n  - button "Copy link" [ref=e2]\n  - text: Details',
        "screenshot_png": _png(1280, 800),
        "viewport_text": "Title\nShip_date",
        "indexed_dom": IndexedDom(
            text="[7]<button />", agent_default="[7]<button />", agent_would_truncate=False, agent_char_limit=40_000,
            agent_viewport_threshold=1000,
            selector_map={7: SelectorEntry(target_id=PAGE, backend_node_id=70, xpath="html/body/a", frame_depth=0),
                          9: SelectorEntry(target_id=FRAME, backend_node_id=70, xpath="html/body/a", frame_depth=1)},
        ),
        "stagehand": Snapshot(formatted_tree="[0-5] RootWebArea: x\n  [0-7] button: Copy link",
                              xpath_map={"0-5": "/", "0-7": "/html[1]/body[1]/button[1]"}, url_map={}),
        "html_before_browser_use": "<html></html>",
        "html_after_browser_use": "<html></html>",
        "timings_ms": {},
    }
    fields.update(changes)
    return PageViews.model_validate(fields)


def _target(node: int = 70, target: str = PAGE, boundaries: tuple[str, ...] = (), box: Box | None = None,
            names: tuple[str, ...] = ("Copy link",)) -> ResolvedTarget:
    return ResolvedTarget(
        boundaries=boundaries,  # type: ignore[arg-type]
        ref=ElementRef(target_id=target, backend_node_id=node),
        document_url="https://www.study.test/x",
        box=box if box is not None else Box(x=10, y=20, width=100, height=30),
        visible_name="",
        names=names,
        selector="button",
    )


# ------------------------------------------------------------------------------------------ answers


@pytest.mark.parametrize(
    ("answer_format", "raw", "parsed"),
    [
        ("css_selector", {"selector": "#buy"}, SelectorAnswer(selector="#buy")),
        ("text", {"text": "Buy", "occurrence": 2}, TextAnswer(text="Buy", occurrence=2)),
        ("text", {"text": "Buy", "why": "a comment the model added"}, TextAnswer(text="Buy")),
        ("role_name", {"role": "button", "name": ""}, RoleAnswer(role="button", name="")),
        ("index", {"index": "12"}, IndexAnswer(index=12)),
        ("point", {"x": 10, "y": 20.5}, PointAnswer(x=10, y=20.5)),
    ],
)
def test_answers_that_fit_their_format_parse(answer_format: str, raw: object, parsed: object) -> None:
    assert parse_act_answer(answer_format, raw) == parsed  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("answer_format", "raw", "problem"),
    [
        ("css_selector", "#buy", "expected a JSON object, got str"),
        ("css_selector", {"selector": ""}, "selector: String should have at least 1 character"),
        ("text", {"txt": "Buy"}, "text: Field required"),
        ("text", {"text": "Buy", "occurrence": 0}, "occurrence: Input should be greater than or equal to 1"),
        ("role_name", {"role": 'button"]', "name": "x"}, "role: String should match pattern"),
        ("role_name", {"role": "button"}, "name: Field required"),
        ("index", {"index": True}, "index: Value error, a boolean is not a number"),
        ("index", {"index": 1.5}, "index: Input should be a valid integer"),
        ("point", {"x": "left", "y": 3}, "x: Input should be a valid number"),
        ("point", None, "expected a JSON object, got NoneType"),
    ],
)
def test_answers_that_do_not_fit_are_unparseable(answer_format: str, raw: object, problem: str) -> None:
    result = parse_act_answer(answer_format, raw)  # type: ignore[arg-type]
    assert isinstance(result, Unresolved) and result.reason == "unparseable"
    assert problem in result.detail


# ------------------------------------------------------------------------------------------ aria lines


@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        ('- button "Add to basket"', ("button", "Add to basket")),
        ('    - textbox "Email address":', ("textbox", "Email address")),
        ('- heading "Ridgeback 38" [level=1]', ("heading", "Ridgeback 38")),
        ('- spinbutton "Quantity": "1"', ("spinbutton", "Quantity")),
        ('- checkbox "Keep me \\"in\\"" [checked]', ("checkbox", 'Keep me "in"')),
        ("- 'link \"Say: hi\"':", ("link", "Say: hi")),
        ("- 'button \"It''s\"'", ("button", "It's")),
        ("- status", ("status", "")),
        ("- text: I never set a password", ("text", "")),
        ("- /url: /products", None),
        ("plain text", None),
    ],
)
def test_aria_snapshot_lines_give_role_and_name(line: str, parsed: tuple[str, str] | None) -> None:
    assert parse_node(line) == parsed


# ------------------------------------------------------------------------------------------ geometry, resolution


def test_boxes_points_and_frame_clips() -> None:
    box = Box(x=10, y=20, width=100, height=30)
    assert box.contains(10, 20) and box.contains(110, 50) and not box.contains(111, 30)
    assert Box(x=-10, y=790, width=40, height=40).clip(1280, 800) == Box(x=0, y=790, width=30, height=10)
    assert Box(x=0, y=800, width=10, height=10).clip(1280, 800) is None
    assert png_size(_png(1280, 800)) == (1280, 800)
    with pytest.raises(ValueError, match="not a PNG"):
        png_size(b"GIF89a" + bytes(30))
    assert resolve_point(1279.5, 0, 1280, 800) == Point(x=1279.5, y=0)
    assert resolve_point(1280, 10, 1280, 800) == Unresolved(
        reason="outside_image", detail="(1280, 10) is outside the 1280x800 image")
    assert resolve_point(5, -1, 1280, 800).reason == "outside_image"  # type: ignore[union-attr]
    # An iframe at (100, 700) sized 400x300, its document starting 2 px in: only its top 100 px show.
    assert frame_clip((0, 0, 1280, 800), (100, 700, 500, 1000), (102, 702)) == (-2, -2, 398, 98)
    assert frame_clip((0, 0, 1280, 800), (100, 900, 500, 1000), (102, 902)) is None


def test_indexes_resolve_through_the_selector_map_with_their_target() -> None:
    dom = _views().indexed_dom
    assert resolve_index(dom, 9) == ElementRef(target_id=FRAME, backend_node_id=70)
    assert resolve_index(dom, 8) == Unresolved(reason="not_found", detail="index 8 is not in the selector map")
    # The same backend node id in two targets names two elements.
    assert index_of(dom, ElementRef(target_id=PAGE, backend_node_id=70)) == 7
    assert index_of(dom, ElementRef(target_id=FRAME, backend_node_id=70)) == 9
    assert index_of(dom, ElementRef(target_id=PAGE, backend_node_id=71)) is None


# ------------------------------------------------------------------------------------------ representability


def test_representability_follows_the_representation_and_the_page() -> None:
    views = _views()
    reps = REPRESENTATIONS
    top = _target()
    framed = _target(target=FRAME, boundaries=("iframe_cross_site",))
    closed = _target(boundaries=("shadow_closed",))
    aria_line = '- button "Copy link"'

    assert act_representable(reps["raw_html"], views, top, aria_line).representable
    assert not act_representable(reps["raw_html"], views, closed, None).representable
    assert act_representable(reps["raw_html"], views, framed, None).reason == "the target is behind iframe_cross_site"

    # The button's only name is its aria-label, which markdownify does not keep.
    assert not act_representable(reps["markdown"], views, top, aria_line).representable
    escaped = _target(names=("", "Save_for_later"))
    shown = act_representable(reps["markdown"], views, escaped, None)
    assert shown.reason == "'Save_for_later' appears in the markdown"

    assert act_representable(reps["accessibility_tree"], views, top, aria_line).representable
    assert not act_representable(reps["accessibility_tree"], views, top, '- button "Other"').representable
    role_less = act_representable(reps["accessibility_tree"], views, top, "- text: Details")
    assert not role_less.representable and "no role" in role_less.reason
    assert not act_representable(reps["accessibility_tree"], views, top, None).representable
    assert not act_representable(reps["accessibility_tree"], views, framed, aria_line).representable

    assert act_representable(reps["indexed_dom"], views, framed, None).reason == "the target is index 9"
    assert not act_representable(reps["indexed_dom"], views, _target(node=5), None).representable

    assert act_representable(reps["screenshot"], views, framed, None).representable
    below = _target(box=Box(x=10, y=800, width=100, height=30))
    assert not act_representable(reps["screenshot"], views, below, None).representable

    task = ReadTask(id="r", page="p", kind="READ", question="q", answer="Ship_date", aliases=[])
    for name in ("raw_html", "markdown", "screenshot"):  # markdown escapes "_"; the screenshot's text shows it
        assert read_representable(reps[name], views, task).representable, name
    assert not read_representable(reps["indexed_dom"], views, task).representable


# ------------------------------------------------------------------------------------------ scoring


def test_act_scoring() -> None:
    truth = ElementRef(target_id=PAGE, backend_node_id=70)
    box = Box(x=10, y=20, width=100, height=30)
    assert score_act(truth, truth, box, YES) == Verdict(correct=True, reason="correct", detail=None, representable=True)
    # Same node id, other target: another element.
    other = score_act(ElementRef(target_id=FRAME, backend_node_id=70), truth, box, YES)
    assert (other.correct, other.reason) == (False, "wrong_element")
    assert score_act(Point(x=60, y=35), truth, box, YES).correct
    missed = score_act(Point(x=60, y=51), truth, box, YES)
    assert (missed.correct, missed.reason) == (False, "wrong_element")
    for reason in ("invalid_selector", "ambiguous", "not_found", "outside_image", "unparseable"):
        verdict = score_act(Unresolved(reason=reason, detail="d"), truth, box, YES)  # type: ignore[arg-type]
        assert (verdict.correct, verdict.reason, verdict.detail) == (False, reason, "d")
    # Wrong on a target the representation does not carry: not_representable, the first reason kept.
    hidden = score_act(Unresolved(reason="not_found", detail="'#x' matched 0"), truth, box, NO)
    assert hidden == Verdict(correct=False, reason="not_representable", representable=False,
                             detail="not_found: '#x' matched 0; not representable: behind iframe_cross_site")
    # Representability never makes a right answer wrong.
    assert score_act(truth, truth, box, NO) == Verdict(correct=True, reason="correct", detail=None, representable=False)


def test_read_scoring() -> None:
    assert score_read("3 march 2026.", "3 March 2026", ["2026-03-03"], YES).reason == "correct"
    assert score_read("2026–03–03", "3 March 2026", ["2026-03-03"], YES).correct
    wrong = score_read("4 March 2026", "3 March 2026", [], YES)
    assert (wrong.correct, wrong.reason) == (False, "wrong_answer")
    assert score_read(None, "x", [], YES).reason == "unparseable"
    assert score_read({"answer": "x"}, "x", [], YES).detail == "expected a string, got dict"
    assert score_read("nope", "x", [], NO).reason == "not_representable"


# ------------------------------------------------------------------------------------------ registry, tokens, report


def test_registry_has_seven_representations_in_study_order() -> None:
    assert list(REPRESENTATIONS) == ["raw_html", "markdown", "accessibility_tree", "screenshot", "indexed_dom",
                                     "aria_ai", "stagehand_snapshot"]
    formats = {r.name: (r.kind, r.answer_format, r.extension) for r in REPRESENTATIONS.values()}
    assert formats["screenshot"] == ("image", "point", "png")
    assert formats["raw_html"] == ("text", "css_selector", "txt")
    with pytest.raises(InputError, match="unknown representation 'pdf'; known: raw_html, markdown"):
        get_representation("pdf")
    views = _views()
    for rep in REPRESENTATIONS.values():
        rendered = rep.render(views)
        assert isinstance(rendered, bytes if rep.kind == "image" else str)
    assert "screenshot_png" not in views.model_dump() and not views.browser_use_changed_html


def test_view_tokens_and_their_table() -> None:
    views = _views(markdown="hello world")
    markdown = view_tokens("p", REPRESENTATIONS["markdown"], REPRESENTATIONS["markdown"].render(views))
    shot = view_tokens("p", REPRESENTATIONS["screenshot"], REPRESENTATIONS["screenshot"].render(views))
    assert (markdown.tokens, markdown.characters, markdown.image) == (2, 11, None)
    assert shot.tokens == 1334 and shot.image is not None and (shot.image.padded_width, shot.image.padded_height) == (
        1288, 812)
    assert token_table([markdown, shot]).splitlines() == [
        "page   markdown  screenshot",
        "p             2       1,334",
        "total         2       1,334",
    ]


def _check(task: str, check: str, expected: bool, correct: bool, representable: bool = True) -> SelftestCheck:
    reason = "correct" if correct else "not_found"
    return SelftestCheck(page="p", task=task, kind="ACT", representation="raw_html", check=check,  # type: ignore[arg-type]
                         answer={"selector": "#x"}, expected_correct=expected,
                         verdict=Verdict(correct=correct, reason=reason, detail=None, representable=representable))


def test_the_selftest_report_fails_on_any_unexpected_score() -> None:
    good = SelftestReport(snapshot="s", tasks="t", checks=[
        _check("a", "perfect", True, True), _check("a", "other_target", False, False),
        _check("b", "perfect", False, False, representable=False), _check("b", "other_target", False, False),
    ])  # fmt: skip
    assert good.failures == [] and exit_status(good) == 0
    assert good.summary()[0].model_dump() == {"representation": "raw_html", "act_pairs": 2, "act_representable": 1,
                                             "act_failed": 0, "read_pairs": 0, "read_present": 0, "read_failed": 0}
    # The other task's answer scoring correct is a failure, whatever the perfect answer did.
    bad = SelftestReport(snapshot="s", tasks="t", checks=[*good.checks[:3], _check("b", "other_target", False, True)])
    assert exit_status(bad) == 1 and bad.summary()[0].act_failed == 1
    table = selftest_table(bad)
    assert "FAIL b raw_html other_target: expected incorrect, got correct" in table
    assert table.endswith("1 of 2 task x representation pairs pass")


# ------------------------------------------------------------------------------------------ task files


def test_task_files_of_both_kinds_load(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    full = load_study_tasks(root / "tasks.json")
    assert full.snapshot == root / "snapshots" / "study" and len(full.tasks.tasks) == 80
    bare = load_study_tasks(root / "src" / "capreplay" / "testing" / "fixtures" / "study" / "tasks.json")
    assert bare.snapshot is None and [p.id for p in bare.tasks.pages] == [p.id for p in full.tasks.pages]

    broken = tmp_path / "tasks.json"
    broken.write_text(json.dumps({"pages": [{"id": "a", "kind": "k", "url": "u"}], "tasks": [{"id": "t"}]}))
    with pytest.raises(InputError) as caught:
        load_study_tasks(broken)
    assert caught.value.where == str(broken) and caught.value.message.startswith("invalid task file: tasks.0")
    no_study = tmp_path / "replay.json"
    no_study.write_text(json.dumps({"schema_version": 1, "snapshots": {"f": "snapshots/fixtures"}}))
    with pytest.raises(InputError, match="has no 'study' section"):
        load_study_tasks(no_study)
    with pytest.raises(InputError, match="cannot read"):
        load_study_tasks(tmp_path / "missing.json")


def test_an_aria_ref_is_representable_when_a_ref_names_the_target() -> None:
    views = _views()
    aria_ai = REPRESENTATIONS["aria_ai"]
    assert act_representable(aria_ai, views, _target(), None, "e2").representable
    missing = act_representable(aria_ai, views, _target(), None, None)
    assert not missing.representable and "no ref" in missing.reason


def test_refs_named_finds_the_lines_of_a_role_and_name_in_page_order() -> None:
    snapshot = ('- main [ref=e1]:\n  - button "Copy link" [ref=e2]\n  - button "Copy" [ref=e3]\n'
                '  - iframe [ref=e4]:\n    - button "Copy link" [ref=f1e2]\n  - text: Details')  # fmt: skip
    assert refs_named(snapshot, "button", "Copy link") == ["e2", "f1e2"]
    assert refs_named(snapshot, "button", None) == ["e2", "e3", "f1e2"]
    assert refs_named(snapshot, None, None) == ["e1", "e2", "e3", "e4", "f1e2"]
