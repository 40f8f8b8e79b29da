"""Finding a claimed value on a cited page, rendered from the snapshot. Pure: the caller hands over the texts.

A :class:`Source` is one text the cited page showed or loaded: its visible text with attribute values, or
a JSON or text response body it fetched. :func:`find_number` looks for a number within a tolerance,
:func:`find_text` for a normalised text; either returns the :class:`~capreplay.judge.verdict.Evidence`
of where it was found (the closest number, the first text) with a snippet of the original text around it.
A JSON body's numbers are read by JSON's syntax, and the numbers written in its strings by the text rules.
"""

from __future__ import annotations

import json
import math
import re
import string
import unicodedata
from collections.abc import Iterable, Iterator

from pydantic import BaseModel, ConfigDict, Field

from capreplay.judge.fields import NumberMatch, iter_numbers
from capreplay.judge.verdict import Evidence
from capreplay.util.answer_text import normalize_answer

SNIPPET_RADIUS = 80
"""Characters of the original text kept on each side of a match in a snippet."""
SNIPPET_MAX = 400
"""The longest snippet kept (a long matched value is cut after its start)."""

# A decimal difference such as 4.7 - 4.6 is 0.10000000000000053 in binary floats; this relative slack
# keeps a value exactly at the tolerance's edge inside it.
_FLOAT_SLACK = 1e-9

# Tokens of a JSON text: a whole string (so numbers are looked for inside it by the text rules) or a
# JSON number, read with JSON's own syntax (``[38,40]`` is two numbers, ``1.2e3`` is 1200).
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?')
_ASCII_PUNCTUATION = frozenset(string.punctuation)


class Source(BaseModel):
    """One text a cited page showed or loaded, and the archived response it came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str = Field(description="The URL of the page, or of the response the text is the body of.")
    record_id: str | None = Field(None, description="WARC-Record-ID of the archived response.")
    payload_digest: str | None = Field(None, description="Its WARC-Payload-Digest.")
    text: str = Field(description="The page's visible text plus attribute values, or a JSON or text body.")


def _snippet(text: str, start: int, end: int) -> str:
    """The original text from ``SNIPPET_RADIUS`` characters before ``start`` to as many after ``end``,
    whitespace collapsed, at most ``SNIPPET_MAX`` characters."""
    snippet = " ".join(text[max(0, start - SNIPPET_RADIUS) : end + SNIPPET_RADIUS].split())
    return snippet if len(snippet) <= SNIPPET_MAX else snippet[: SNIPPET_MAX - 3] + "..."


def _evidence(source: Source, start: int, end: int) -> Evidence:
    return Evidence(
        url=source.url,
        record_id=source.record_id,
        payload_digest=source.payload_digest,
        snippet=_snippet(source.text, start, end),
    )


def _json_numbers(text: str) -> Iterator[NumberMatch]:
    """The numbers of a JSON text: its number tokens, and the numbers written inside its strings."""
    for token in _JSON_TOKEN.finditer(text):
        raw = token.group()
        if not raw.startswith('"'):
            value = float(raw)
            if math.isfinite(value):
                yield NumberMatch(token.start(), token.end(), value)
            continue
        content = raw[1:-1]
        if "\\" not in content:
            for found in iter_numbers(content):
                yield NumberMatch(token.start() + 1 + found.start, token.start() + 1 + found.end, found.value)
            continue
        # Escapes (\u2212, \n) make the decoded string shorter than the raw one, so a number found in it
        # is placed at the same offset in the raw string: a little early, never outside the string.
        decoded = json.loads(raw)
        last = token.end() - 1
        for found in iter_numbers(decoded):
            start = min(token.start() + 1 + found.start, last)
            yield NumberMatch(start, min(token.start() + 1 + found.end, last), found.value)


def _is_json(text: str) -> bool:
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return False
    try:
        json.loads(stripped)
    except json.JSONDecodeError:
        return False
    return True


def numbers_in(text: str) -> Iterator[NumberMatch]:
    """Every number in a source's text: by JSON's syntax if the text is a JSON object or array, else by
    :func:`capreplay.judge.fields.iter_numbers` (the syntax of ``parse_number``)."""
    return _json_numbers(text) if _is_json(text) else iter_numbers(text)


def find_number(sources: Iterable[Source], value: float, tolerance: float) -> Evidence | None:
    """Evidence of the number closest to ``value``, if one within ``tolerance`` is in any source; else None.

    Ties go to the earlier source, then the earlier position. The tolerance is an absolute difference,
    inclusive (with a relative slack of 1e-9 for binary floats).
    """
    if not math.isfinite(value):
        raise ValueError(f"cannot look for the number {value!r}")
    if tolerance < 0 or not math.isfinite(tolerance):
        raise ValueError(f"tolerance must be a finite number >= 0, not {tolerance!r}")
    limit = tolerance + _FLOAT_SLACK * max(1.0, abs(value))
    best: tuple[float, Source, NumberMatch] | None = None
    for source in sources:
        for found in numbers_in(source.text):
            difference = abs(found.value - value)
            if difference <= limit and (best is None or difference < best[0]):
                best = (difference, source, found)
    if best is None:
        return None
    _, source, found = best
    return _evidence(source, found.start, found.end)


def _needle_pattern(needle: str) -> re.Pattern[str]:
    """The needle, bounded by non-word characters where it starts or ends with a word character."""
    before = r"(?<!\w)" if re.match(r"\w", needle) else ""
    after = r"(?!\w)" if re.match(r"\w", needle[-1]) else ""
    return re.compile(before + re.escape(needle) + after)


def _normalized_with_origins(text: str) -> tuple[str, list[int]]:
    """``text`` normalised piece by piece, and for each character of the result the index it came from.

    Each character with its combining marks is normalised on its own, then backslashes before ASCII
    punctuation are dropped and whitespace collapsed, as :func:`normalize_answer` does on the whole. The result
    equals ``normalize_answer(text)`` except where normalisation joins pieces (rare compositions across
    characters, a text's final ``.``); positions through it are then approximate.
    """
    chars: list[str] = []
    origins: list[int] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        while j < n and unicodedata.combining(text[j]):
            j += 1
        piece = text[i:j]
        if piece.isspace():
            folded = " "
        elif piece.isascii():
            folded = piece.lower()
        else:
            # normalize_answer() would strip a lone "." or whitespace made by NFKC; keep the piece's own form.
            folded = normalize_answer(piece) or unicodedata.normalize("NFKC", piece).casefold()
        for ch in folded:
            chars.append(ch)
            origins.append(i)
        i = j
    out_chars: list[str] = []
    out_origins: list[int] = []
    for k, ch in enumerate(chars):
        if ch == "\\" and k + 1 < len(chars) and chars[k + 1] in _ASCII_PUNCTUATION:
            continue
        if ch.isspace():
            if not out_chars or out_chars[-1] == " ":
                continue
            ch = " "
        out_chars.append(ch)
        out_origins.append(origins[k])
    if out_chars and out_chars[-1] == " ":
        out_chars.pop()
        out_origins.pop()
    return "".join(out_chars), out_origins


def _locate(text: str, pattern: re.Pattern[str], normal: str, found: re.Match[str]) -> tuple[int, int]:
    """Where in the original ``text`` the match ``found`` in ``normal`` (= normalize_answer(text)) lies."""
    mapped, origins = _normalized_with_origins(text)
    again = pattern.search(mapped)
    if again is not None:
        return origins[again.start()], origins[again.end() - 1] + 1
    # The piecewise form differs from the whole: place the match in proportion to the lengths.
    scale = len(text) / max(1, len(normal))
    return int(found.start() * scale), int(found.end() * scale)


def find_text(sources: Iterable[Source], value: str) -> Evidence | None:
    """Evidence of the first source whose normalised text holds the normalised ``value``; else None.

    Normalisation is :func:`capreplay.util.answer_text.normalize_answer` (NFKC, dashes, whitespace, casefold...).
    Where the value starts or ends with a word character, the text must not continue the word there: "38"
    is not found in "380" nor "A38", but is in "$38.00". A value that normalises to nothing is never found.
    The snippet comes from the original text, located through a piecewise normalisation (see
    :func:`_normalized_with_origins`), so in rare texts it may be a few characters off.
    """
    needle = normalize_answer(value)
    if not needle:
        return None
    pattern = _needle_pattern(needle)
    for source in sources:
        normal = normalize_answer(source.text)
        found = pattern.search(normal)
        if found is not None:
            start, end = _locate(source.text, pattern, normal, found)
            return _evidence(source, start, end)
    return None
