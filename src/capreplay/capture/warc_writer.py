"""Buffers exchanges and appends them to the snapshot's WARC at page boundaries.

Records of a page are appended together and synced before the manifest is rewritten, so a capture that
is killed leaves whole records and a manifest that matches the bytes it lists. A response whose payload an
earlier record already holds (the same stylesheet on every page of a crawl, the same JSON fetched twice) is
written as a revisit record that refers to it, so each resource is stored once.
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path
from urllib.parse import urlsplit

from capreplay.archive.warc.append import WarcAppender
from capreplay.archive.warc.build import Original, exchange_records, format_warc_date, new_record_id, warcinfo_record
from capreplay.archive.warc.exchange import Exchange
from capreplay.archive.warc.live import stream_timeline_record
from capreplay.capture.websocket_log import websocket_members
from capreplay.errors import OutputError, os_reason
from capreplay.models.live_traffic import WebSocketLog
from capreplay.models.manifest import WebSocketCounts

ARCHIVE_FILE = "archive/data-00000.warc.gz"
REVISIT_MIN_BYTES = 1024
"""Payloads shorter than this are stored again: a revisit record's own headers cost about half a kilobyte."""


class WarcWriter:
    """Collects exchanges from the proxy and writes them as WARC records when told to flush."""

    def __init__(self, root: Path, warcinfo: dict[str, str]) -> None:
        self.root = root
        self.path = root / ARCHIVE_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.warcinfo_id = f"<urn:uuid:{uuid.uuid4()}>"
        self._pending: list[Exchange] = []
        self._pending_websockets: list[tuple[Exchange, WebSocketLog]] = []
        self.websockets = WebSocketCounts()
        """The WebSocket connections written so far, and their messages."""
        self.records = 0
        self.bytes = 0
        self.hosts: set[str] = set()
        self.revisits = 0
        self._originals: dict[bytes, Original] = {}  # sha256 of a payload -> the response record that holds it
        try:
            self._out = WarcAppender(self.path)
            self._append(warcinfo_record(warcinfo, record_id=self.warcinfo_id))
            self._out.sync()
        except OSError as e:
            raise OutputError(f"cannot write the archive: {os_reason(e)}", self.path) from e

    def add(self, exchange: Exchange) -> None:
        """Keep an exchange until the next :meth:`flush` (called from the proxy's event loop)."""
        self._pending.append(exchange)

    def add_websocket(self, handshake: Exchange, log: WebSocketLog) -> None:
        """Keep a WebSocket connection (its handshake and every message) until the next :meth:`flush`."""
        self._pending_websockets.append((handshake, log))

    def flush(self) -> int:
        """Append every pending exchange and sync the file; returns how many were written."""
        pending, self._pending = self._pending, []
        websockets, self._pending_websockets = self._pending_websockets, []
        try:
            for exchange in pending:
                ids = (new_record_id(), new_record_id())
                original = self._original(exchange, ids[1])
                request, response = exchange_records(exchange, warcinfo_id=self.warcinfo_id, record_ids=ids,
                                                     revisit_of=original)  # fmt: skip
                self.revisits += original is not None
                self._append(request)
                self._append(response)
                if exchange.timeline is not None:
                    # Right after its response, so replay finds it by reading on from the response record.
                    self._append(
                        stream_timeline_record(
                            exchange.timeline, concurrent_to=ids[1], date=exchange.started, warcinfo_id=self.warcinfo_id
                        )
                    )
                self.hosts.add(_host(exchange.url))
            for handshake, log in websockets:
                for member in websocket_members(handshake, log, warcinfo_id=self.warcinfo_id):
                    self._append(member)
                self.websockets = self.websockets.counted(log)
                self.hosts.add(_host(handshake.url))
            self._out.sync()
        except OSError as e:
            raise OutputError(f"cannot write the archive: {os_reason(e)}", self.path) from e
        return len(pending)

    def _original(self, exchange: Exchange, record_id: str) -> Original | None:
        """The earlier record holding this exchange's payload; None (and remembered as such a record) if none."""
        if len(exchange.response_body) < REVISIT_MIN_BYTES or exchange.timeline is not None:
            return None  # an event stream's timeline record reads on from its own response record
        digest = hashlib.sha256(exchange.response_body).digest()
        known = self._originals.get(digest)
        if known is None:
            target_uri = exchange.url.replace(" ", "%20")
            self._originals[digest] = Original(record_id, target_uri, format_warc_date(exchange.started))
        return known

    def _append(self, member: bytes) -> None:
        self._out.append(member)
        self.records += 1
        self.bytes += len(member)

    def close(self) -> None:
        """Flush what is left and close the file."""
        self.flush()
        self._out.close()


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()
