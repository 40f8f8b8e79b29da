"""The HAR 1.2 format as pydantic models: lenient on reading, complete on writing.

Tools add fields of their own, named with a leading underscore (``_resourceType``, ``_transferSize``,
``_error``, ``_failureText``, ``_file``, ``_webSocketMessages``, ...), and leave out fields the specification
requires that nothing here needs (``cookies``, ``headersSize``, ``timings``), or write them as ``null``
(Firefox's ``"headersSize": null``, Charles's ``"redirectURL": null``), so every model keeps unknown fields and
gives the others a default, which a ``null`` gets too. mitmproxy's importer (``mitmproxy/io/har.py``) reads
such files the same way, and also headers written as ``[name, value]`` pairs (Slack's HARs), read here too.
What a conversion cannot do without is required, and ``null`` there is an error: ``log.entries``, and in each
entry ``startedDateTime``, ``request.method``, ``request.url`` and ``response.status``. The defaults are what
HAR 1.2 says to write when a value is unknown, so a model built by :mod:`.build` dumps to a complete HAR.

The specification: http://www.softwareishard.com/blog/har-12-spec/ (content.text is the response body
"decoded (decompressed & unchunked)", in base64 when ``encoding`` says so).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

HAR_VERSION = "1.2"


class _Har(BaseModel):
    """Keeps the fields tools add (``_resourceType`` and the like) and reads them back as attributes."""

    model_config = ConfigDict(extra="allow")

    @model_validator(mode="before")
    @classmethod
    def _null_is_missing(cls, data: Any) -> Any:
        """A ``null`` where this model has a default takes the default (Firefox, Charles and others write it)."""
        if not isinstance(data, dict):
            return data
        optional = {name for name, f in cls.model_fields.items() if not f.is_required()}
        return {k: v for k, v in data.items() if v is not None or k not in optional}

    def extra(self, name: str) -> Any:
        """The value of a field this model does not declare (``_error``), None when absent."""
        return (self.model_extra or {}).get(name)


class NameValue(_Har):
    """A header, cookie or query argument."""

    name: str
    value: str = ""

    @model_validator(mode="before")
    @classmethod
    def _pair(cls, data: Any) -> Any:
        """``["name", "value"]``, as Slack writes headers, is the pair ``{"name": ..., "value": ...}``."""
        if isinstance(data, list | tuple) and len(data) == 2:
            return {"name": data[0], "value": data[1]}
        return data


class Creator(_Har):
    """The tool (``creator``) or browser (``browser``) that wrote the HAR."""

    name: str = ""
    version: str = ""


class Page(_Har):
    """One page the recording loaded; entries name it by ``id`` in their ``pageref``."""

    startedDateTime: datetime | None = Field(default=None, description="When the page started loading.")
    id: str = Field(description="The page's id, unique in the HAR.")
    title: str = Field(default="", description="The document title (Chrome DevTools writes the page's URL).")
    pageTimings: dict[str, Any] = Field(default_factory=dict, description="onContentLoad/onLoad in ms, or -1.")


class PostParam(_Har):
    """One posted parameter (a URL-encoded form field, or a multipart part)."""

    name: str
    value: str | None = None
    fileName: str | None = None
    contentType: str | None = None


class PostData(_Har):
    """A request body. ``encoding`` is Playwright's addition: ``base64`` means ``text`` holds base64."""

    mimeType: str = ""
    text: str | None = Field(default=None, description="The body as text (UTF-8), or base64 of its bytes.")
    params: list[PostParam] = Field(default_factory=list, description="Parsed URL-encoded or multipart fields.")
    encoding: str | None = Field(default=None, description="``base64`` when ``text`` is base64 of the bytes.")


class Request(_Har):
    """The request of an entry."""

    method: str
    url: str = Field(description="Absolute URL, fragment left out.")
    httpVersion: str = ""
    cookies: list[dict[str, Any]] = Field(default_factory=list)
    headers: list[NameValue] = Field(default_factory=list)
    queryString: list[NameValue] = Field(default_factory=list)
    postData: PostData | None = None
    headersSize: int = -1
    bodySize: int = -1


class Content(_Har):
    """The response body: ``text`` decoded (no Content-Encoding), base64 of the bytes when ``encoding``
    says ``base64``; absent when the recording kept no body."""

    size: int = Field(default=-1, description="Length of the decoded body in bytes; -1 when unknown.")
    compression: int | None = None
    mimeType: str = ""
    text: str | None = None
    encoding: str | None = None


class Response(_Har):
    """The response of an entry."""

    status: int = Field(description="HTTP status; 0 (DevTools) or -1 (Playwright) for no response.")
    statusText: str = ""
    httpVersion: str = ""
    cookies: list[dict[str, Any]] = Field(default_factory=list)
    headers: list[NameValue] = Field(default_factory=list)
    content: Content = Field(default_factory=Content)
    redirectURL: str = ""
    headersSize: int = -1
    bodySize: int = -1


class Timings(_Har):
    """Phases of an exchange in ms; HAR requires send, wait and receive."""

    send: float = 0
    wait: float = 0
    receive: float = 0


class Entry(_Har):
    """One exchange."""

    pageref: str | None = Field(default=None, description="The id of the page it belongs to.")
    startedDateTime: datetime = Field(description="When the request started (ISO 8601 with a zone).")
    time: float = 0
    request: Request
    response: Response
    cache: dict[str, Any] = Field(default_factory=dict)
    timings: Timings = Field(default_factory=Timings)
    serverIPAddress: str | None = None


class Log(_Har):
    """The HAR's one top-level object."""

    version: str = HAR_VERSION
    creator: Creator = Field(default_factory=Creator)
    browser: Creator | None = None
    pages: list[Page] = Field(default_factory=list)
    entries: list[Entry]
    comment: str | None = None


class Har(_Har):
    """A HAR file: ``{"log": {...}}``."""

    log: Log
