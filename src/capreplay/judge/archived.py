"""The judge's lookup of a cited URL in the snapshot: the archived response a new page load of it is answered with.

The lookup matches by identity only: with the replay's fuzzy rules an agent citing ``?id=999`` would be credited
with the archived ``?id=1``. It has a matcher of its own, apart from the server's: sharing the server's would
advance its count of repeated requests, and the browser loading the cited page would then get another recording.

A URL captured more than once (a page visited again during capture) is always answered with its first recording,
as a new page load is: the evidence a verdict names then depends on the URL alone, not on how many episodes of
the judging session cited it before (a replay matcher hands repeats the next recording each time).
"""

from __future__ import annotations

from capreplay.archive.warc.stored import StoredRecord
from capreplay.replay.candidates import IndexCandidates
from capreplay.replay.matching import IDENTITY_RULES, Matcher
from capreplay.replay.store import SnapshotStore


class ArchivedLookup:
    """Finds the archived response of a cited URL in ``store``; the same one for every lookup of that URL."""

    def __init__(self, store: SnapshotStore) -> None:
        self.store = store
        self._matcher = Matcher(IndexCandidates(store.index), rules=IDENTITY_RULES, nearest_query=False)

    def archived(self, url: str) -> StoredRecord | None:
        """The archived response a new page load of ``url`` (a GET) is answered with, or None if there is none."""
        # Each lookup starts from the first recording, as a new page load does (see the module docstring).
        self._matcher.reset()
        match = self._matcher.match("GET", url, None)
        if match is None:
            return None
        return self.store.record(match.candidate.ref)  # type: ignore[arg-type]
