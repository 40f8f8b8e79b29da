"""Bodies for synthetic snapshots: text that compresses like real text, images with real headers.

Everything is derived from a seed, and nothing here is expensive per record: text is cut from pools of
pre-formatted units (HTML paragraphs, CSS rules, JS functions, JSON objects) built once per seed, and
image bytes come from :meth:`random.Random.randbytes`. Pure functions, no I/O.
"""

from __future__ import annotations

import bisect
import gzip
import random
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate

POOL_BYTES = 1 << 20
"""Size of each text pool; a body longer than its pool wraps around to the pool's start."""
_VOCABULARY = 3000
GZIP_LEVEL = 1
"""nginx's default ``gzip_comp_level``: what most servers send, and fast to generate."""
_SAMPLE = 64 * 1024  # how much of a pool is compressed to learn its gzip ratio


@dataclass(frozen=True)
class TextPool:
    """Consecutive units of one kind of text, and where each unit ends, for cutting slices quickly."""

    units: list[str]
    ends: list[int]
    """``ends[i]``: length of ``units[:i + 1]`` joined (with ``sep``)."""
    sep: str
    gzip_ratio: float
    """Plain bytes per gzip byte, measured on a sample: a body meant to be N bytes once encoded is cut
    ``N * gzip_ratio`` long before compression, so stored sizes follow the planned distribution."""

    def cut(self, rng: random.Random, size: int) -> str:
        """About ``size`` characters of whole units from a random starting unit (at least one unit)."""
        start = rng.randrange(len(self.units))
        base = self.ends[start - 1] + len(self.sep) if start else 0
        parts: list[str] = []
        taken = 0
        # Bounded: every pass takes at least one unit, and each pass takes a whole pool's worth or the rest.
        while taken < size:
            stop = bisect.bisect_left(self.ends, base + size - taken, lo=start)
            chunk = self.units[start : stop + 1]
            parts.extend(chunk)
            taken += sum(map(len, chunk)) + len(self.sep) * len(chunk)
            start, base = 0, 0
        return self.sep.join(parts)


def _words(rng: random.Random) -> list[str]:
    letters = "etaoinshrdlucmfwypvbgkqjxz"
    weights = [12, 9, 8, 8, 7, 7, 6, 6, 6, 4, 4, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1]
    return ["".join(rng.choices(letters, weights, k=rng.randint(2, 10))) for _ in range(_VOCABULARY)]


def _pool(units: list[str], sep: str) -> TextPool:
    ends = list(accumulate(len(u) + len(sep) for u in units))
    ends = [e - len(sep) for e in ends]
    sample = sep.join(units)[:_SAMPLE].encode()
    ratio = len(sample) / len(gzip.compress(sample, compresslevel=GZIP_LEVEL, mtime=0))
    return TextPool(units, ends, sep, ratio)


def build_pools(seed: int) -> dict[str, TextPool]:
    """One pool per text kind (``html``, ``css``, ``js``, ``json``), each about :data:`POOL_BYTES` long."""
    rng = random.Random(f"pools:{seed}")
    words = _words(rng)

    def phrase(lo: int, hi: int) -> str:
        return " ".join(rng.choices(words, k=rng.randint(lo, hi)))

    def fill(make: Callable[[], str]) -> list[str]:
        units: list[str] = []
        total = 0
        while total < POOL_BYTES:
            unit = make()
            units.append(unit)
            total += len(unit) + 1
        return units

    def html() -> str:
        tag = rng.choice(("p", "p", "p", "li", "h2", "div"))
        link = rng.choice(words)
        cls, text, leaf = rng.choice(words), phrase(8, 60), rng.choice(words)
        return f'<{tag} class="{cls}">{text} <a href="/{link}/{leaf}">{link}</a></{tag}>'

    def css() -> str:
        props = "; ".join(
            f"{rng.choice(('margin', 'padding', 'color', 'width', 'font-size', 'border'))}: "
            f"{rng.choice(('0', '4px', '1rem', '#' + format(rng.getrandbits(24), '06x'), 'auto', '100%'))}"
            for _ in range(rng.randint(2, 6))
        )
        return f".{rng.choice(words)}-{rng.choice(words)} {{ {props} }}"

    def js() -> str:
        a, b = rng.choice(words), rng.choice(words)
        suffix, factor = rng.getrandbits(16), rng.randint(2, 99)
        return f'function {a}_{suffix}({b}) {{ return {b}.map((x) => x * {factor}).join("{a}"); }}'

    def json_object() -> str:
        return (
            f'{{"id":{rng.getrandbits(31)},"name":"{phrase(1, 4)}","price":{rng.randint(100, 99999) / 100},'
            f'"tags":["{rng.choice(words)}","{rng.choice(words)}"],"available":{rng.choice(("true", "false"))}}}'
        )

    return {
        "html": _pool(fill(html), "\n"),
        "css": _pool(fill(css), "\n"),
        "js": _pool(fill(js), "\n"),
        "json": _pool(fill(json_object), ","),
    }


def gzip_body(text: str) -> bytes:
    """``text`` as a gzip Content-Encoding would carry it; mtime 0, so the bytes are reproducible."""
    return gzip.compress(text.encode(), compresslevel=GZIP_LEVEL, mtime=0)


def png(rng: random.Random, size: int) -> bytes:
    """A PNG-looking body of about ``size`` bytes: real signature, IHDR, IDAT and IEND chunks, random data."""
    width, height = rng.randint(16, 1600), rng.randint(16, 1200)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    data = rng.randbytes(max(size - 57, 1))
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", data) + _chunk(b"IEND", b"")


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def jpeg(rng: random.Random, size: int) -> bytes:
    """A JPEG-looking body of about ``size`` bytes: SOI, a JFIF APP0 segment, random data, EOI."""
    app0 = b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    return b"\xff\xd8" + app0 + rng.randbytes(max(size - 24, 1)) + b"\xff\xd9"


def mp4(rng: random.Random, size: int) -> bytes:
    """An MP4-looking body of ``size`` bytes: an ``ftyp`` box, then one ``mdat`` box of random data."""
    ftyp = struct.pack(">I4s4sI4s4s", 24, b"ftyp", b"isom", 512, b"isom", b"mp41")
    data = rng.randbytes(max(size - 32, 1))
    return ftyp + struct.pack(">I4s", len(data) + 8, b"mdat") + data
