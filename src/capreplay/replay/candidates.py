"""The matcher's candidates, read from a sorted index one bucket at a time.

A candidate holds only what matching compares (method, URL, request body, capture order); its ``ref`` is
the offset of its line in the index, from which the store reads the full entry once the candidate wins.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

from capreplay.archive.index.lookup import SortedIndex
from capreplay.replay.matching import Candidate


class IndexCandidates:
    """A :class:`capreplay.replay.matching.CandidateSource` over a :class:`SortedIndex`."""

    def __init__(self, index: SortedIndex) -> None:
        self.index = index

    def bucket(self, key: str) -> list[Candidate]:
        """Candidates whose SURT key is ``key`` or ``key`` followed by a query."""
        return [c for offset, line in self.index.lines_under(key, "?") if (c := _candidate(offset, line))]

    def exact(self, urlkey: str) -> list[Candidate]:
        """Candidates whose SURT key is exactly ``urlkey``: one binary search, a line or two parsed."""
        return [c for offset, line in self.index.lines(urlkey) if (c := _candidate(offset, line))]

    def __iter__(self) -> Iterator[Candidate]:
        for offset, line in self.index:
            cand = _candidate(offset, line)
            if cand is not None:
                yield cand


def _candidate(offset: int, line: bytes) -> Candidate | None:
    """The candidate of one index line; None for a revisit whose original is not in the archive (there is
    no payload to serve for it). Lines were checked when the index was opened."""
    fields = json.loads(line.split(b" ", 2)[2])
    if fields.get("revisit_of") is not None and fields.get("orig_offset") is None:
        return None
    posted = fields.get("post_body")
    # Bodies too large to keep in the index are stored by digest; such requests match by method and URL.
    body = base64.b64decode(posted) if posted and not posted.startswith("sha256:") else None
    return Candidate(method=fields["method"], url=fields["url"], body=body, seq=fields["seq"], ref=offset,
                     not_modified=fields.get("status") == 304)  # fmt: skip
