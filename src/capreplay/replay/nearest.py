"""The nearest rules for requests other than GET: the closest recorded body, and a beacon answered by its GET.

They come after every keyed rule (:data:`capreplay.replay.rules.FUZZY_RULES`) and after ``nearest-query``,
in this order, and ``serve --strict`` turns them off with it; the judge's lookup never uses them. Like the
keyed rules they never cross a host or a path, so they look only at the bucket the matcher already holds.

- ``nearest-body``: a POST (PUT, PATCH, ...) that no keyed rule matched gets the recording of the same
  method, host, path and operation (GraphQL's operation name and query, a JSON-RPC method; see
  :mod:`capreplay.replay.bodies`) whose query and body differ from the request's in the fewest fields, then
  by the least difference in values, ties to the earliest capture. Beacons and RPCs carry a time, a request
  counter or a random id in the query or the body (Google's csi beacons, ``_reqid``, analytics payloads),
  and asking again never asks for something else.
- ``beacon-get``: a beacon (``navigator.sendBeacon``, ``<a ping>``: a request whose response no script can
  read) sent with a method the archive never recorded for its path, where a GET of that path is archived,
  gets that GET (the one with the nearest query). Today's Chromium POSTs what older pages fetched as images.

Pure: every choice is a function of the request and the candidates, so the same request against the same
snapshot always gets the same record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from capreplay.replay.bodies import Field, by_name, fields_distance, form_fields, parse_body
from capreplay.replay.rules import query_distance, request_method, same_path, url_forms

if TYPE_CHECKING:
    from capreplay.replay.matching import Candidate

NEAREST_BODY = "nearest-body"
"""For a method other than GET/HEAD: the recording of the same method, path and operation whose query and
body are closest (fewest differing fields, then values), ties to the earliest capture. Off under strict."""

BEACON_GET = "beacon-get"
"""For a beacon sent with a method its path was never recorded with: the archived GET of that path with the
nearest query. Off under strict."""


def operation_and_fields(url: str, body: bytes | None) -> tuple[str | None, list[Field]]:
    """A request's operation (from its body, else from a GraphQL ``operationName`` in its query) and the fields
    the nearest-body rule compares: its query's as ``?name``, its body's under their own names."""
    query = url_forms(url).reordered.partition("?")[2]
    fields = [("?" + name.lower(), value) for name, value in form_fields(query)] if query else []
    operation = None
    if body:
        parsed = parse_body(body)
        operation = parsed.operation
        fields.extend(parsed.fields)
    if operation is None:
        named = [value for name, value in fields if name == "?operationname"]
        operation = f"graphql:{named[0]}" if named else None
    return operation, fields


def nearest_body(candidates: Sequence[Candidate], method: str, url: str, body: bytes | None) -> Candidate | None:
    """The candidate the ``nearest-body`` rule gives a request, or None. ``candidates`` in capture order."""
    wanted = request_method(method)
    if wanted == "GET":
        return None
    operation, fields = operation_and_fields(url, body)
    mine = by_name(fields)
    best: tuple[tuple[int, float], Candidate] | None = None
    for cand in candidates:
        if request_method(cand.method) != wanted or not same_path(url, cand.url):
            continue
        their_operation, their_fields = operation_and_fields(cand.url, cand.body)
        if their_operation != operation:
            continue  # another operation is another question, however alike its variables
        distance = fields_distance(mine, by_name(their_fields))
        if best is None or distance < best[0]:  # strictly less: ties keep the earliest
            best = (distance, cand)
    return None if best is None else best[1]


def beacon_get(candidates: Sequence[Candidate], method: str, url: str) -> Candidate | None:
    """The candidate the ``beacon-get`` rule gives a beacon, or None: only when no candidate on its path was
    recorded with its method, the GET (not HEAD: a GET needs a body) of that path with the nearest query."""
    wanted = request_method(method)
    if wanted == "GET":
        return None
    same = [c for c in candidates if same_path(url, c.url)]
    if any(request_method(c.method) == wanted for c in same):
        return None  # the path was recorded with this method: only nearest-body may answer it
    gets = [c for c in same if c.method.upper() == "GET"]
    return min(gets, key=lambda c: query_distance(url, c.url)) if gets else None


def is_beacon(headers: Mapping[str, str]) -> bool:
    """Whether a request's headers show it is a beacon whose response no script can read.

    Chromium marks ``<a ping>`` with ``Content-Type: text/ping`` and ``Ping-To``; ``navigator.sendBeacon``
    (with no data or CORS-safelisted data) and ``fetch(..., {mode: "no-cors"})`` are sent with
    ``Sec-Fetch-Mode: no-cors`` and ``Sec-Fetch-Dest: empty``, and their response is opaque to the page.
    Chromium sends ``Sec-Fetch-*`` to https origins only, so a ``sendBeacon`` over plain http is not seen.
    """
    kind = (headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
    if kind == "text/ping" or "Ping-To" in headers:
        return True
    mode = (headers.get("Sec-Fetch-Mode") or "").lower()
    return mode == "no-cors" and (headers.get("Sec-Fetch-Dest") or "").lower() == "empty"
