"""The benchmark's site cards: one per application, written by hand, compiled into the committed cards file,
and every item of one card borne out on the replay (``capreplay benchmark cards --check`` checks all)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from capreplay.benchmark.roster import BUILDERS, application
from capreplay.benchmark.site_cards import CARDS_FILE, cards_json, compile_cards
from capreplay.errors import InputError
from tests.support.cli import cli

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmark"


def test_every_application_has_a_card_on_its_own_host() -> None:
    cards = compile_cards(BENCHMARK, BENCHMARK / "snapshot").cards
    assert sorted(c.site for c in cards) == sorted(application(name).host for name in BUILDERS)
    for card in cards:
        assert card.hosts == [card.site]
        assert len(card.functions) >= 4 and len(card.execution_items) >= 8 and len(card.perception_items) >= 8
        assert all(i.location.url.split("/")[2] == card.site for i in [*card.execution_items, *card.perception_items])


def test_the_committed_cards_file_is_the_compilation_of_the_cards() -> None:
    compiled = compile_cards(BENCHMARK, BENCHMARK / "snapshot")
    assert (BENCHMARK / CARDS_FILE).read_text(encoding="utf-8") == cards_json(compiled)
    assert compiled.method == "hand" and compiled.made.model == {}


def _one_card(tmp_path: Path, card: dict[str, object]) -> Path:
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "maps.json").write_text(json.dumps(card))
    (tmp_path / "snapshot").symlink_to(BENCHMARK / "snapshot")
    return tmp_path


def test_an_item_on_a_page_the_snapshot_lacks_is_refused_naming_the_file(tmp_path: Path) -> None:
    card = json.loads((BENCHMARK / "cards" / "maps.json").read_text())
    card["execution_items"][0]["location"]["url"] = "http://maps.bench.test/nowhere.html"
    folder = _one_card(tmp_path, card)
    with pytest.raises(InputError) as e:
        compile_cards(folder, folder / "snapshot")
    assert "maps.json" in str(e.value) and "nowhere.html is not a page of the snapshot" in str(e.value)


@pytest.mark.browser
def test_check_bears_out_the_map_card_and_refuses_a_selector_that_matches_nothing(tmp_path: Path) -> None:
    shutil.copytree(BENCHMARK / "cards", tmp_path / "cards")
    (tmp_path / "snapshot").symlink_to(BENCHMARK / "snapshot")
    good = cli("benchmark", "cards", "--benchmark", str(tmp_path), "--check", "--only", "maps.bench.test")
    assert good.returncode == 0, good.stdout + good.stderr
    assert good.stdout.splitlines()[-1].endswith(": 0 not borne out")

    card = json.loads((tmp_path / "cards" / "maps.json").read_text())
    card["execution_items"][0]["location"]["selector"] = ["#no-such-element"]
    (tmp_path / "cards" / "maps.json").write_text(json.dumps(card))
    bad = cli("benchmark", "cards", "--benchmark", str(tmp_path), "--check", "--only", "maps.bench.test")
    assert bad.returncode == 1
    item = card["execution_items"][0]["id"]
    assert f"maps.bench.test {item} on " in bad.stdout and "'#no-such-element' matched 0 elements" in bad.stdout
