"""The judge's lookup of a cited URL: a URL captured more than once gets its first recording on every lookup."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from capreplay.judge.archived import ArchivedLookup
from capreplay.replay.candidates import IndexCandidates
from capreplay.replay.matching import IDENTITY_RULES, Matcher
from capreplay.replay.store import SnapshotStore
from tests.support.paths import ROOT

TWICE = "https://data.parkstats.test/regions/kell-valley"
"""Captured twice in the world snapshot (the page is visited again by a later capture step)."""
ONCE = "https://www.fellgear.test/p/kestrel-2"


@pytest.fixture(scope="module")
def store() -> Iterator[SnapshotStore]:
    opened = SnapshotStore(ROOT / "snapshots" / "world")
    yield opened
    opened.close()


def test_a_url_captured_twice_is_the_first_recording_on_every_lookup(store: SnapshotStore) -> None:
    counting = Matcher(IndexCandidates(store.index), rules=IDENTITY_RULES, nearest_query=False)
    replayed = []
    for _ in range(2):
        match = counting.match("GET", TWICE, None)
        assert match is not None
        replayed.append(store.record(match.candidate.ref).record_id)  # type: ignore[arg-type]
    assert replayed[0] != replayed[1], "the URL is no longer captured twice: pick another for this test"

    lookup = ArchivedLookup(store)
    seen = []
    for url in (TWICE, ONCE, TWICE, TWICE, ONCE):
        record = lookup.archived(url)
        assert record is not None
        seen.append((url, record.record_id))
    assert {record_id for url, record_id in seen if url == TWICE} == {replayed[0]}
    assert len({record_id for url, record_id in seen if url == ONCE}) == 1
    assert ArchivedLookup(store).archived(TWICE).record_id == replayed[0]  # type: ignore[union-attr]


def test_a_url_the_snapshot_lacks_is_none(store: SnapshotStore) -> None:
    lookup = ArchivedLookup(store)
    assert lookup.archived("https://data.parkstats.test/regions/kell-valley?capreplay=never") is None
    assert lookup.archived("https://nowhere.test/") is None
