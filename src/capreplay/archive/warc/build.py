"""Exchange -> WARC records: pure functions from values to bytes, one gzip member per record.

Every record is WARC/1.1 with sha256 ``WARC-Block-Digest`` and ``WARC-Payload-Digest`` written as
``sha256:`` + base32 (warcio's own digest format, which ``warcio check`` verifies). warcio builds and
compresses the record; this module decides what goes in it:

- the response body is stored exactly as received (Content-Encoding kept, e.g. gzip stays gzip);
- framing is normalised because the body is already de-chunked: ``Transfer-Encoding`` is dropped and
  ``Content-Length`` is the stored length; the headers as received go in
  ``WARC-Capreplay-Original-Framing`` whenever that changed anything;
- HTTP/2 and HTTP/3 are written with HTTP/1.1 request and status lines plus ``WARC-Protocol: h2``
  (or ``h3``), pseudo-headers dropped and ``Host`` added from ``:authority``;
- a response whose payload an earlier record of the same archive already holds may be written as a ``revisit``
  record of the identical-payload-digest profile: its own HTTP head, no payload, ``WARC-Refers-To`` the earlier
  record (:class:`Original`), so each resource is stored once;
- HTTP header strings carry one byte per character (latin-1), which is how the capture decodes header
  bytes, so they are written back byte for byte. A character beyond latin-1 cannot have come from the
  wire that way, so it is written as UTF-8 (with surrogate escapes turned back into their bytes).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from io import BytesIO

from warcio.statusandheaders import StatusAndHeaders
from warcio.utils import Digester
from warcio.warcwriter import WARCWriter

from capreplay.archive.warc.exchange import Exchange
from capreplay.errors import ArchiveError

WARC_VERSION = "WARC/1.1"
DIGEST_ALGORITHM = "sha256"
ORIGINAL_FRAMING_HEADER = "WARC-Capreplay-Original-Framing"
IDENTICAL_PAYLOAD_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
PROTOCOL_HEADER = "WARC-Protocol"

_CHECKABLE = frozenset({"md5", "sha1", "sha224", "sha256", "sha384", "sha512"})
_FRAMING = ("content-length", "transfer-encoding")
_PROTOCOLS = {"HTTP/2.0": "h2", "HTTP/2": "h2", "HTTP/3.0": "h3", "HTTP/3": "h3"}
# Headers this module writes itself; an Exchange.extra entry may not replace them.
_RESERVED = frozenset(
    name.lower()
    for name in (
        "WARC-Type", "WARC-Record-ID", "WARC-Date", "WARC-Target-URI", "WARC-IP-Address",
        "WARC-Concurrent-To", "WARC-Warcinfo-ID", "WARC-Block-Digest", "WARC-Payload-Digest",
        "Content-Type", "Content-Length", PROTOCOL_HEADER, ORIGINAL_FRAMING_HEADER,
    )
)  # fmt: skip


class _Sha256Writer(WARCWriter):  # type: ignore[misc]  # warcio has no type hints
    """warcio's writer with sha256 digests; warcio picks its digest in this one hook."""

    @staticmethod
    def _create_digester() -> Digester:
        return Digester(DIGEST_ALGORITHM)


class _RawHttpHead(StatusAndHeaders):  # type: ignore[misc]
    """An HTTP head whose bytes are already final.

    warcio re-serialises HTTP headers as ASCII and percent-encodes anything else, which would change
    latin-1 header bytes; handing it the exact bytes keeps the record faithful to the wire.
    """

    def __init__(self, head: bytes) -> None:
        super().__init__("-", [], protocol="")
        self._head = head

    def compute_headers_buffer(self, header_filter: object = None) -> None:
        self.headers_buff = self._head


def new_record_id() -> str:
    """A fresh ``<urn:uuid:...>`` WARC record id."""
    return f"<urn:uuid:{uuid.uuid4()}>"


def format_warc_date(when: datetime) -> str:
    """``when`` as a WARC/1.1 date in UTC with microseconds; a naive datetime is taken as UTC."""
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def sha256_digest(data: bytes) -> str:
    """``data``'s digest in the form the records carry: ``sha256:`` + base32."""
    digester = Digester(DIGEST_ALGORITHM)
    digester.update(data)
    return str(digester)


def digest_matches(labelled: str, data: bytes) -> bool | None:
    """Does the labelled digest (``algo:value``) match ``data``? None if it cannot be checked.

    Tools write the value in base32 (warcio, wget), hex or base64, so all three are read.
    """
    algo, sep, value = labelled.strip().partition(":")
    algo = algo.lower().replace("-", "")
    if not sep or algo not in _CHECKABLE:
        return None
    actual = hashlib.new(algo, data).digest()
    expected = _decode_digest(value.strip(), len(actual))
    return None if expected is None else expected == actual


def _decode_digest(value: str, size: int) -> bytes | None:
    """The raw digest in ``value`` (hex, base32 or base64, padding optional), None if none fits."""
    if len(value) == 2 * size:
        try:
            return bytes.fromhex(value)
        except ValueError:
            pass
    b32 = value.upper() + "=" * (-len(value) % 8)
    b64 = value + "=" * (-len(value) % 4)
    attempts: list[Callable[[], bytes]] = [
        lambda: base64.b32decode(b32),
        lambda: base64.b64decode(b64, altchars=b"-_"),
        lambda: base64.b64decode(b64),
    ]
    for attempt in attempts:
        try:
            raw = attempt()
        except (ValueError, binascii.Error):
            continue
        if len(raw) == size:
            return raw
    return None


def warcinfo_record(
    fields: dict[str, str],
    *,
    record_id: str | None = None,
    date: str | None = None,
    filename: str | None = None,
) -> bytes:
    """A ``warcinfo`` record (one gzip member) whose ``application/warc-fields`` body lists ``fields``.

    ``date`` is a WARC date string (default: now); ``filename`` adds ``WARC-Filename``.
    """
    lines = []
    for name, value in fields.items():
        _check_text(name, "warcinfo field name")
        _check_text(value, f"warcinfo field {name}")
        if ":" in name:
            raise ArchiveError(f"warcinfo field name {name!r} contains ':'", where="warcinfo")
        lines.append(f"{name}: {value}\r\n")
    headers = [
        ("WARC-Type", "warcinfo"),
        ("WARC-Record-ID", _angle(record_id or new_record_id())),
        ("WARC-Date", date or format_warc_date(datetime.now(UTC))),
    ]
    if filename:
        headers.append(("WARC-Filename", filename))
    return _serialise("warcinfo", headers, None, "".join(lines).encode("utf-8"), "application/warc-fields")


@dataclass(frozen=True)
class Original:
    """The response record a revisit repeats: its id, target URI and WARC-Date, as written."""

    record_id: str
    target_uri: str
    date: str


def exchange_records(
    ex: Exchange,
    *,
    warcinfo_id: str | None = None,
    record_ids: tuple[str, str] | None = None,
    revisit_of: Original | None = None,
) -> tuple[bytes, bytes]:
    """The request record and the response record of ``ex``, each one gzip member.

    ``record_ids`` fixes (request id, response id); with it and a fixed ``ex.started`` the output is
    byte-identical from run to run. The two records point at each other with ``WARC-Concurrent-To``.
    ``revisit_of``: the earlier record that holds the very same payload; the response is then a revisit
    record that refers to it, with the HTTP head as received (its Content-Length the payload's) and no payload.
    """
    req_id, resp_id = (_angle(i) for i in record_ids) if record_ids else (new_record_id(), new_record_id())
    protocol = _protocol(ex)
    line_version = ex.http_version if protocol is None else "HTTP/1.1"
    target_uri = ex.url.replace(" ", "%20")  # WARC-Target-URI may not contain spaces; warcio rewrites them
    _check_text(target_uri, "URL")

    common = [("WARC-Date", format_warc_date(ex.started)), ("WARC-Target-URI", target_uri)]
    if warcinfo_id:
        common.append(("WARC-Warcinfo-ID", _angle(warcinfo_id)))
    if protocol:
        common.append((PROTOCOL_HEADER, protocol))

    req_headers = _request_headers(ex, h2=protocol is not None)
    req_headers, req_framing = _normalise_framing(req_headers, len(ex.request_body), keep=_no_request_body(ex))
    req_line = f"{ex.method} {_request_target(ex.url)} {line_version}"
    req_warc = [("WARC-Type", "request"), ("WARC-Record-ID", req_id), *common]
    req_warc.append(("WARC-Concurrent-To", resp_id))
    req_warc.extend(_framing_header(req_framing))
    request = _serialise(
        "request", req_warc, _encode_head(req_line, req_headers), ex.request_body,
        "application/http; msgtype=request",
    )  # fmt: skip

    resp_headers = [(n, v) for n, v in ex.response_headers if not n.startswith(":")]
    resp_headers, resp_framing = _normalise_framing(resp_headers, len(ex.response_body), keep=_no_body(ex))
    resp_line = f"{line_version} {ex.status} {_reason(ex, protocol)}"
    resp_warc = [("WARC-Type", "response" if revisit_of is None else "revisit"), ("WARC-Record-ID", resp_id), *common]
    if revisit_of is not None:
        resp_warc += [
            ("WARC-Profile", IDENTICAL_PAYLOAD_PROFILE),
            ("WARC-Refers-To", _angle(revisit_of.record_id)),
            ("WARC-Refers-To-Target-URI", revisit_of.target_uri),
            ("WARC-Refers-To-Date", revisit_of.date),
            ("WARC-Payload-Digest", sha256_digest(ex.response_body)),
        ]
    if ex.server_ip:
        resp_warc.append(("WARC-IP-Address", ex.server_ip))
    resp_warc.append(("WARC-Concurrent-To", req_id))
    resp_warc.extend(_framing_header(resp_framing))
    resp_warc.extend(_extra_headers(ex.extra))
    response = _serialise(
        "response" if revisit_of is None else "revisit", resp_warc, _encode_head(resp_line, resp_headers),
        ex.response_body if revisit_of is None else b"", "application/http; msgtype=response",
    )  # fmt: skip
    return request, response


def plain_record(rec_type: str, warc_headers: list[tuple[str, str]], payload: bytes, content_type: str) -> bytes:
    """A record without an HTTP head (``resource``, ``metadata``) as one gzip member, sha256 digests included.

    ``warc_headers`` must hold the type, the record id, the date and any other field the record carries.
    """
    for name, value in warc_headers:
        _check_text(name, "WARC header name")
        _check_text(value, f"WARC header {name}")
    return _serialise(rec_type, warc_headers, None, payload, content_type)


def _serialise(
    rec_type: str, warc_headers: list[tuple[str, str]], head: bytes | None, payload: bytes, content_type: str
) -> bytes:
    """One record as one gzip member. zlib writes a zero mtime in the gzip header, so it is reproducible."""
    out = BytesIO()
    writer = _Sha256Writer(out, gzip=True, warc_version=WARC_VERSION)
    record = writer.create_warc_record(
        "",
        rec_type,
        payload=BytesIO(payload),
        length=len(payload),
        warc_content_type=content_type,
        warc_headers=StatusAndHeaders("", list(warc_headers), protocol=WARC_VERSION),
        http_headers=_RawHttpHead(head) if head is not None else None,
    )
    writer.write_record(record)
    return out.getvalue()


def _protocol(ex: Exchange) -> str | None:
    """The WARC-Protocol value for versions that have no HTTP/1 wire form, None for HTTP/1.x."""
    if ex.http_version in ("HTTP/1.0", "HTTP/1.1"):
        return None
    if ex.http_version in _PROTOCOLS:
        return _PROTOCOLS[ex.http_version]
    raise ArchiveError(f"unknown HTTP version {ex.http_version!r}", where=ex.url)


def _request_headers(ex: Exchange, *, h2: bool) -> list[tuple[str, str]]:
    """Request headers in order, pseudo-headers dropped; h2 gets the Host that HTTP/1.1 requires."""
    headers = [(n, v) for n, v in ex.request_headers if not n.startswith(":")]
    if h2 and not any(n.lower() == "host" for n, _ in headers):
        authority = next((v for n, v in ex.request_headers if n == ":authority"), None)
        headers.insert(0, ("Host", authority or _authority(ex.url)))
    return headers


def _normalise_framing(
    headers: list[tuple[str, str]], body_length: int, *, keep: bool
) -> tuple[list[tuple[str, str]], list[tuple[str, str]] | None]:
    """Drop Transfer-Encoding and make Content-Length the stored length, in the first one's place.

    Returns the new headers and the framing headers as received when anything changed (else None).
    ``keep`` leaves a message alone whose framing does not describe a body, such as a HEAD response,
    where Content-Length announces what a GET would have returned.
    """
    if keep:
        return headers, None
    original = [(n, v) for n, v in headers if n.lower() in _FRAMING]
    result: list[tuple[str, str]] = []
    placed = False
    for name, value in headers:
        lower = name.lower()
        if lower == "content-length" and not placed:
            result.append((name, str(body_length)))
            placed = True
        elif lower not in _FRAMING:
            result.append((name, value))
    if not placed:
        result.append(("Content-Length", str(body_length)))
    return result, (original if result != headers else None)


def _no_body(ex: Exchange) -> bool:
    """A response that by HTTP rules has no body (HEAD, 1xx, 204, 304) and indeed has none."""
    bodiless = ex.method.upper() == "HEAD" or 100 <= ex.status < 200 or ex.status in (204, 304)
    return bodiless and not ex.response_body


def _no_request_body(ex: Exchange) -> bool:
    """A request without body or framing headers (most GETs) is stored as sent, no Content-Length: 0."""
    has_framing = any(n.lower() in _FRAMING for n, _ in ex.request_headers)
    return not ex.request_body and not has_framing


def _framing_header(original: list[tuple[str, str]] | None) -> list[tuple[str, str]]:
    if original is None:
        return []
    return [(ORIGINAL_FRAMING_HEADER, json.dumps([list(p) for p in original], separators=(",", ":")))]


def _extra_headers(extra: dict[str, str]) -> list[tuple[str, str]]:
    for name, value in extra.items():
        _check_text(name, "WARC header name")
        _check_text(value, f"WARC header {name}")
        if name.lower() in _RESERVED or ":" in name or not name:
            raise ArchiveError(f"extra WARC header {name!r} is not allowed", where="Exchange.extra")
    return list(extra.items())


def _reason(ex: Exchange, protocol: str | None) -> str:
    """The reason phrase; h2/h3 have none, so the standard phrase stands in on the HTTP/1.1 line."""
    if ex.reason or protocol is None:
        return ex.reason
    try:
        return HTTPStatus(ex.status).phrase
    except ValueError:
        return ""


def _request_target(url: str) -> str:
    """Origin-form target (path and query, never the fragment) of an absolute URL."""
    rest = url.split("#", 1)[0]
    sep = rest.find("://")
    if sep < 0:
        return rest or "/"
    after = rest[sep + 3 :]
    cut = min((i for i in (after.find("/"), after.find("?")) if i >= 0), default=len(after))
    path = after[cut:]
    return "/" + path if not path.startswith("/") else path


def _authority(url: str) -> str:
    """host[:port] of an absolute URL, without user info."""
    after = url.split("://", 1)[-1]
    for stop in "/?#":
        after = after.split(stop, 1)[0]
    return after.rsplit("@", 1)[-1]


def _encode_head(start_line: str, headers: list[tuple[str, str]]) -> bytes:
    _check_text(start_line, "HTTP start line")
    lines = [_wire(start_line)]
    for name, value in headers:
        _check_text(name, "HTTP header name")
        _check_text(value, f"HTTP header {name}")
        lines.append(_wire(name) + b": " + _wire(value))
    return b"\r\n".join(lines) + b"\r\n\r\n"


def _wire(text: str) -> bytes:
    """Header text back to bytes: latin-1 (one char per byte), else UTF-8 that never raises."""
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        pass
    try:
        # mitmproxy's str view decodes UTF-8 with surrogate escapes; this gives its bytes back
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        # a lone surrogate that is no escape: keep it visible rather than fail the capture
        return text.encode("utf-8", "backslashreplace")


def _check_text(text: str, what: str) -> None:
    """A line break inside a header would end the header early and corrupt the record."""
    if "\r" in text or "\n" in text:
        raise ArchiveError(f"{what} contains a line break: {text[:80]!r}", where="WARC record")


def _angle(record_id: str) -> str:
    return record_id if record_id.startswith("<") else f"<{record_id}>"
