"""The model-client tests' shared pieces: test keys, a PNG, settings for the fake server, a closed port."""

from __future__ import annotations

import io
import socket

from PIL import Image

from capreplay.llm import ModelRequest, ModelSettings

TEST_KEY = "sk-ant-test-0123456789-SECRET"
OPENAI_TEST_KEY = "sk-openai-test-9876543210-SECRET"


def png_file(width: int, height: int) -> bytes:
    """A PNG of the given size (one colour, so the bytes never change)."""
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, format="PNG")
    return out.getvalue()


def anthropic_settings(base_url: str, **changes: object) -> ModelSettings:
    """Settings for the fake server's Anthropic API, with ``changes`` applied."""
    values: dict[str, object] = {
        "model": "claude-test",
        "max_tokens": 256,
        "thinking": {"type": "disabled"},
        "timeout_s": 10.0,
        "base_url": base_url,
    }
    return ModelSettings.model_validate(values | changes)


def openai_settings(base_url: str, **changes: object) -> ModelSettings:
    """Settings for the fake server's Chat Completions API, with ``changes`` applied."""
    values: dict[str, object] = {
        "provider": "openai_compatible",
        "model": "local-test",
        "max_tokens": 256,
        "timeout_s": 10.0,
        "base_url": base_url,
    }
    return ModelSettings.model_validate(values | changes)


def mixed_request(png: bytes) -> ModelRequest:
    """A system text, two text blocks and one image: 3 + 4 + 20 + 1 = 28 input tokens by the fake's rule."""
    return ModelRequest.of("Question MARK-A", png, "end", system="sys prompt")


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
