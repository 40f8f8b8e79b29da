"""HAR bodies to bytes and back: ``content`` and ``postData`` as text or base64. Pure functions.

A HAR keeps a response body decoded (Content-Encoding undone), as ``text`` or, with ``encoding: "base64"``,
as base64 of its bytes. Which bytes a ``text`` stands for depends on the tool that wrote it:

- Chrome DevTools and mitmproxy (``savehar``, through ``get_text``) store the text as decoded with the
  response's charset, so the bytes are that text in the charset the ``Content-Type`` header names (UTF-8
  when it names none, or one Python does not know, or one the text cannot be written in; a charset named
  only in the document's ``<meta>`` is not looked for);
- Playwright stores ``text`` only for a body that is valid UTF-8 (base64 otherwise), so its text is always
  the body's UTF-8, whatever the header says.

:func:`content_of` writes ``text`` only where :func:`body_bytes` gives the very same bytes back, so a HAR
capreplay writes reads back byte for byte.
"""

from __future__ import annotations

import base64
import binascii
import codecs
from urllib.parse import parse_qsl, urlencode

from capreplay.archive.har.model import Content, NameValue, PostData, PostParam

UTF8_WRITERS = frozenset({"playwright"})
"""HAR writers (``log.creator.name``, lower-case) whose ``text`` is always the body's UTF-8."""
_UTF8 = frozenset({"utf-8", "utf8"})
_TEXT_SUFFIXES = ("+json", "+xml")
_TEXT_TYPES = frozenset({
    "application/json", "application/javascript", "application/x-javascript", "application/ecmascript",
    "application/xml", "application/xhtml+xml", "application/x-www-form-urlencoded", "application/manifest+json",
})  # fmt: skip


class BadContent(ValueError):
    """A body a HAR cannot mean: base64 that does not decode, or an encoding nobody defined."""


def header(headers: list[NameValue] | list[tuple[str, str]], name: str) -> str | None:
    """The first value of header ``name`` (case-insensitive) in HAR or (name, value) form, or None."""
    lower = name.lower()
    for h in headers:
        key, value = (h.name, h.value) if isinstance(h, NameValue) else h
        if key.lower() == lower:
            return value
    return None


def charset(content_type: str | None) -> str | None:
    """The ``charset`` a Content-Type names, as Python's codec name; None when it names none Python knows."""
    for part in (content_type or "").split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset":
            try:
                return codecs.lookup(value.strip().strip("\"'")).name
            except LookupError:
                return None
    return None


def decode_text(text: str, encoding: str | None, *, content_type: str | None, utf8_text: bool) -> bytes:
    """The bytes a HAR ``text`` (with its ``encoding``) stands for; :class:`BadContent` if it cannot be read.

    ``utf8_text`` says the HAR's writer stores text as the body's UTF-8 (see the module docstring).
    """
    if encoding is not None and encoding.strip().lower() == "base64":
        try:
            return base64.b64decode("".join(text.split()), validate=True)
        except (binascii.Error, ValueError) as e:
            raise BadContent(f"is not valid base64 ({e})") from e
    if encoding:
        raise BadContent(f"has the encoding {encoding!r}; HAR knows only base64")
    named = None if utf8_text else charset(content_type)
    if named is not None and named not in _UTF8:
        try:
            return text.encode(named)
        except UnicodeEncodeError:
            pass  # the header's charset cannot hold this text, so it was not decoded with it
    return text.encode("utf-8", "surrogatepass")


def is_textual(mime: str) -> bool:
    """Is ``mime`` (no parameters, lower-case) a text type a HAR is read more easily as text?"""
    return mime.startswith("text/") or mime in _TEXT_TYPES or mime.endswith(_TEXT_SUFFIXES)


def content_of(body: bytes, content_type: str | None) -> Content:
    """The HAR ``content`` of a decoded body: ``text`` for a textual type whose text reads back to exactly
    these bytes (under the rule for writers other than Playwright), base64 otherwise."""
    mime = (content_type or "").split(";", 1)[0].strip().lower()
    content = Content(size=len(body), mimeType=content_type or "x-unknown")
    if is_textual(mime):
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and decode_text(text, None, content_type=content_type, utf8_text=False) == body:
            content.text = text
            return content
    content.text = base64.b64encode(body).decode("ascii")
    content.encoding = "base64"
    return content


def post_bytes(post: PostData) -> bytes:
    """A request body from its ``postData``: the text (base64 when Playwright's ``encoding`` says so), else
    its URL-encoded ``params`` put back together; :class:`BadContent` for base64 that does not decode."""
    if post.text:
        return decode_text(post.text, post.encoding, content_type=None, utf8_text=True)
    if post.params and post.mimeType.split(";", 1)[0].strip().lower() == "application/x-www-form-urlencoded":
        return urlencode([(p.name, p.value or "") for p in post.params]).encode("ascii")
    return b""


def post_data_of(body: bytes, content_type: str | None) -> PostData:
    """The ``postData`` of a request body: UTF-8 text when it is, else base64 with ``encoding: "base64"``,
    which Playwright's ``route_from_har`` reads (HAR 1.2 itself has no way to carry other bytes)."""
    mime = content_type or "application/octet-stream"
    params: list[PostParam] = []
    try:
        text = body.decode("utf-8")
        encoding = None
    except UnicodeDecodeError:
        text, encoding = base64.b64encode(body).decode("ascii"), "base64"
    if encoding is None and mime.split(";", 1)[0].strip().lower() == "application/x-www-form-urlencoded":
        params = [PostParam(name=n, value=v) for n, v in parse_qsl(text, keep_blank_values=True)]
    return PostData(mimeType=mime, text=text, params=params, encoding=encoding)
