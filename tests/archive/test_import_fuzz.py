"""Import of damaged input only ever fails with capreplay's own errors, and always ends.

Hypothesis feeds the importer random bytes, truncations, flipped bytes and spliced garbage of a real WARC
(gzip and plain) and of a real WACZ. Every run must end in a snapshot or an :class:`InputError`; any other
exception is a bug (a traceback for a user's bad file). ``deadline`` fails slow runs, and an alarm stops a
run that hangs, raising an exception the importer's own error handling cannot mistake for bad input.
"""

from __future__ import annotations

import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from types import FrameType

from hypothesis import HealthCheck, given, settings, strategies as st

from capreplay.archive.importer.snapshot import ImportOptions, import_archives
from capreplay.errors import InputError
from tests.support import foreign_warc as fs

WARC_RECORDS = [
    fs.warcinfo(0, "software: fuzz\r\n"),
    fs.page(1, "http://f.example/", b"<title>F</title><p>body"),
    fs.request(2, "http://f.example/", of=1),
    fs.page(3, "http://f.example/c", b"5\r\nhello\r\n0\r\n\r\n", headers=[("Transfer-Encoding", "chunked")]),
    fs.record("revisit", "http://f.example/", b"", n=4, payload_digest=fs.sha1_b32(b"<title>F</title><p>body")),
]
GZ = fs.gz(*WARC_RECORDS)
PLAIN = b"".join(WARC_RECORDS)
RUN_SECONDS = 10
FUZZ = settings(max_examples=300, deadline=timedelta(seconds=3), suppress_health_check=[HealthCheck.too_slow])


class Hung(BaseException):
    """Raised by the alarm: derives from BaseException so no ``except`` for bad input can catch it."""


@contextmanager
def alarm(seconds: int) -> Iterator[None]:
    def ring(signum: int, frame: FrameType | None) -> None:
        raise Hung(f"the import ran for more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def import_bytes(data: bytes, name: str) -> None:
    """Import ``data`` saved as ``name``; success and InputError are the only acceptable outcomes."""
    with tempfile.TemporaryDirectory() as tmp, alarm(RUN_SECONDS):
        path = Path(tmp) / name
        path.write_bytes(data)
        try:
            import_archives(ImportOptions(inputs=[path], out=Path(tmp) / "out", random_seed=1))
        except InputError:
            assert not (Path(tmp) / "out").exists(), "bad input must leave nothing behind"


@st.composite
def damaged(draw: st.DrawFn, original: bytes) -> bytes:
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["truncate", "flip", "splice", "cut"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "truncate":
            del data[at:]
        elif kind == "flip" and data:
            data[at] ^= draw(st.integers(1, 255))
        elif kind == "splice":
            data[at:at] = draw(st.binary(min_size=1, max_size=40))
        else:
            del data[at : at + draw(st.integers(1, 200))]
    return bytes(data)


@FUZZ
@given(st.binary(max_size=3000), st.sampled_from(["x.warc.gz", "x.warc", "x.wacz"]))
def test_random_bytes(data: bytes, name: str) -> None:
    import_bytes(data, name)


@FUZZ
@given(damaged(GZ))
def test_damaged_gzip_warc(data: bytes) -> None:
    import_bytes(data, "x.warc.gz")


@FUZZ
@given(damaged(PLAIN))
def test_damaged_plain_warc(data: bytes) -> None:
    import_bytes(data, "x.warc")


@settings(max_examples=150, deadline=timedelta(seconds=3), suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_damaged_wacz(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        original = fs.wacz(Path(tmp) / "ok.wacz", {"a.warc.gz": GZ}, [{"url": "http://f.example/"}]).read_bytes()
    import_bytes(data.draw(damaged(original)), "x.wacz")


def test_the_undamaged_inputs_import() -> None:
    for data, name in ((GZ, "x.warc.gz"), (PLAIN, "x.warc")):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / name
            path.write_bytes(data)
            result = import_archives(ImportOptions(inputs=[path], out=Path(tmp) / "out", random_seed=1))
            assert [p.url for p in result.manifest.pages] == ["http://f.example/"]
