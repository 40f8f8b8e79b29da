"""Capture plan validation: good plans load, bad ones are one clear PlanError naming the file."""

import json
from pathlib import Path

import pytest

from capreplay.capture.plan_file import load_plan, parse_maps, plan_from_urls
from capreplay.errors import PlanError, UsageError
from capreplay.models.capture_plan import Autoscroll, Click, Fill, TypeText, Upload


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "plan.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_a_full_plan_loads(tmp_path: Path) -> None:
    plan = load_plan(write(tmp_path, {
        "pages": [{"url": "https://a.test/form", "actions": [
            {"type": "fill", "selector": "#name", "value": "Ada"},
            {"type": "click", "selector": "#submit"},
            {"type": "autoscroll", "max_steps": 5},
        ]}],
        "crawl": {"seeds": ["https://a.test/"], "depth": 2, "max_pages": 10, "same_site": True},
    }))
    actions = plan.pages[0].actions
    assert isinstance(actions[0], Fill) and isinstance(actions[1], Click) and isinstance(actions[2], Autoscroll)
    assert plan.crawl is not None and plan.crawl.depth == 2


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("{not json", "not valid JSON"),
        ({"pages": []}, "names no pages"),
        ({"pages": [{"url": "ftp://a.test/"}]}, "pages.0.url"),
        ({"pages": [{"url": "https://a.test/", "actions": [{"type": "teleport"}]}]}, "pages.0.actions.0"),
        ({"pages": [{"url": "https://a.test/", "actions": [{"type": "click"}]}]}, "selector"),
        ({"pages": [{"url": "https://a.test/"}], "extra": 1}, "extra"),
        ({"crawl": {"seeds": ["https://a.test/"], "depth": -1}}, "crawl.depth"),
        ([1, 2], "plan"),
    ],
)
def test_bad_plans_are_one_line_naming_the_file(tmp_path: Path, data: object, expected: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(PlanError) as err:
        load_plan(path)
    line = err.value.line()
    assert line.startswith(str(path) + ": ")
    assert expected in line
    assert "\n" not in line
    assert err.value.exit_code == 2


def test_missing_plan_file(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="no such file"):
        load_plan(tmp_path / "nope.json")


def test_urls_become_pages_or_a_crawl() -> None:
    plain = plan_from_urls(["https://a.test/"], depth=None, max_pages=None, same_site=False)
    assert [p.url for p in plain.pages] == ["https://a.test/"] and plain.crawl is None
    crawl = plan_from_urls(["https://a.test/"], depth=2, max_pages=5, same_site=True)
    assert crawl.crawl is not None and crawl.crawl.max_pages == 5 and not crawl.pages
    with pytest.raises(PlanError):
        plan_from_urls(["a.test"], depth=None, max_pages=None, same_site=False)


def test_parse_maps() -> None:
    assert parse_maps(["Shop.test=127.0.0.1:8443"]) == {"shop.test": ("127.0.0.1", 8443)}
    for bad in ["shop.test", "shop.test=127.0.0.1", "=127.0.0.1:1", "a=b:port"]:
        with pytest.raises(UsageError):
            parse_maps([bad])


def test_type_and_upload_steps_load(tmp_path: Path) -> None:
    plan = load_plan(write(tmp_path, {"pages": [{"url": "http://wiki.test/wiki/Special:Upload", "actions": [
        {"type": "type", "selector": "#wpTextbox1", "value": "\n* "},
        {"type": "upload", "selector": "#wpUploadFile", "file": "benchmark/files/click-icon.png"},
    ]}]}))  # fmt: skip
    typed, upload = plan.pages[0].actions
    assert isinstance(typed, TypeText) and typed.value == "\n* "
    assert isinstance(upload, Upload) and upload.file == "benchmark/files/click-icon.png"


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ({"type": "type", "selector": "#t", "value": ""}, "at least 1 character"),
        ({"type": "upload", "selector": "#f"}, "file"),
        ({"type": "upload", "selector": "#f", "file": "benchmark\\files\\a.png"}, "forward slashes"),
        ({"type": "upload", "selector": "#f", "file": "benchmark/files/"}, "not a path to a file"),
    ],
)
def test_bad_type_and_upload_steps_are_refused(tmp_path: Path, action: dict[str, str], expected: str) -> None:
    with pytest.raises(PlanError, match=expected):
        load_plan(write(tmp_path, {"pages": [{"url": "https://a.test/", "actions": [action]}]}))
