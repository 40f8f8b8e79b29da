"""The model-client tests' fixtures: a test key in the environment, a PNG (helpers: tests/support/llm.py)."""

from __future__ import annotations

import pytest

from tests.support.llm import TEST_KEY, png_file


@pytest.fixture(autouse=True)
def model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A known Anthropic key, and no other setting from the environment that could send a call elsewhere."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_LOG"):
        monkeypatch.delenv(name, raising=False)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def png() -> bytes:
    """A 150x100 PNG: 20 image tokens by the fake server's rule (15,000 / 750)."""
    return png_file(150, 100)
