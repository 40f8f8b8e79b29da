"""No API key reaches a log line, an error, stdout/stderr, the settings or the cache."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from capreplay.errors import ModelError
from capreplay.llm import ModelRequest, make_client
from capreplay.testing.fake_llm import FakeLLM, Reply
from tests.support.llm import OPENAI_TEST_KEY, TEST_KEY, anthropic_settings, closed_port, openai_settings


async def test_keys_stay_out_of_logs_errors_and_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_TEST_KEY)
    caplog.set_level(logging.DEBUG)  # the most the SDK, aiohttp and capreplay will ever log
    script = ["ok", Reply(status=429), Reply(status=401, message="invalid x-api-key"), Reply(text="late", delay_s=5)]
    errors: list[ModelError] = []
    kept: list[str] = []
    async with FakeLLM(script) as anthropic_fake, FakeLLM(script) as openai_fake:
        for settings in (
            anthropic_settings(anthropic_fake.base_url, timeout_s=0.5),
            openai_settings(openai_fake.openai_base_url, timeout_s=0.5),
            anthropic_settings(f"http://127.0.0.1:{closed_port()}"),
            openai_settings(f"http://127.0.0.1:{closed_port()}/v1"),
        ):
            kept.append(settings.model_dump_json())
            client = make_client(settings, cache_dir=tmp_path / "cache")
            kept.append(repr(client))
            try:
                for prompt in ("a", "b", "c", "d"):
                    try:
                        await client.complete(ModelRequest.of(prompt))
                    except ModelError as e:
                        errors.append(e)
            finally:
                await client.aclose()
    # both fakes: a success, then 429, 401, timeout; the closed ports: "a" is a cache hit, the rest fail
    assert [e.kind for e in errors] == [*["rate_limit", "api_status", "timeout"] * 2, *["connection"] * 6]
    assert any(r.name.startswith("anthropic") for r in caplog.records)  # the SDK's debug log was captured
    out, err = capfd.readouterr()
    cache_text = "".join(p.read_text() for p in (tmp_path / "cache").iterdir())
    kept += [caplog.text, out, err, cache_text]
    kept += [f"{e!s} {e!r} {e.line()} {e.__cause__!s}" for e in errors]
    for key in (TEST_KEY, OPENAI_TEST_KEY):
        assert all(key not in text for text in kept)
        assert all(key[-12:] not in text for text in kept)  # not even a tail of it
