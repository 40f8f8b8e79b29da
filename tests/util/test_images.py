"""Screenshots kept as lossless WebP hold the very pixels of Chromium's PNG."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from capreplay.util.images import lossless_webp

SCREENSHOT = Path(__file__).resolve().parents[2] / "snapshots" / "world" / "captures" / "0000.png"


def test_the_webp_decodes_to_the_same_pixels_in_fewer_bytes() -> None:
    png = SCREENSHOT.read_bytes()
    webp = lossless_webp(png)
    assert webp[:4] == b"RIFF" and webp[8:12] == b"WEBP"
    assert len(webp) < len(png)
    with Image.open(io.BytesIO(png)) as before, Image.open(io.BytesIO(webp)) as after:
        assert after.format == "WEBP"
        assert after.size == before.size == (1280, 800)
        assert after.convert("RGB").tobytes() == before.convert("RGB").tobytes()
