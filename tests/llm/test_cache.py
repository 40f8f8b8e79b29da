"""The response cache: a hit makes no HTTP call, the key holds exactly what decides the answer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from capreplay.errors import InputError, ModelError
from capreplay.llm import CachedClient, ModelRequest, cache_key, make_client
from capreplay.testing.fake_llm import FakeLLM, Reply
from tests.support.llm import anthropic_settings, mixed_request, openai_settings


async def test_a_hit_makes_no_second_request_and_returns_the_same_answer(png: bytes, tmp_path: Path) -> None:
    async with FakeLLM(["first", "second"]) as fake:
        client = make_client(anthropic_settings(fake.base_url), cache_dir=tmp_path / "cache")
        assert isinstance(client, CachedClient)
        try:
            first = await client.complete(mixed_request(png))
            again = await client.complete(mixed_request(png))
        finally:
            await client.aclose()
    assert len(fake.received) == 1
    assert (first.text, first.cached) == ("first", False)
    assert again == first.model_copy(update={"cached": True})
    key = cache_key("complete", client.settings, mixed_request(png))
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [f"{key}.json"]  # no temporary file left
    stored = json.loads((tmp_path / "cache" / f"{key}.json").read_text())
    assert stored["key"] == key and stored["result"]["text"] == "first"


async def test_endpoint_and_timeout_are_not_part_of_the_key_but_output_settings_are(tmp_path: Path) -> None:
    request = ModelRequest.of("q")
    async with FakeLLM("one") as first, FakeLLM("two") as second:
        warm = make_client(anthropic_settings(first.base_url), cache_dir=tmp_path)
        same = make_client(anthropic_settings(second.base_url, timeout_s=99.0), cache_dir=tmp_path)
        longer = make_client(anthropic_settings(second.base_url, max_tokens=512), cache_dir=tmp_path)
        try:
            assert (await warm.complete(request)).text == "one"
            assert (await same.complete(request)).text == "one"
            assert second.received == []
            assert (await longer.complete(request)).text == "two"
            assert (await longer.complete(ModelRequest.of("other"))).text == "two"
        finally:
            for client in (warm, same, longer):
                await client.aclose()
    assert len(first.received) == 1 and len(second.received) == 2


async def test_concurrent_identical_calls_ask_the_api_once(tmp_path: Path) -> None:
    async with FakeLLM(Reply(text="slow", delay_s=0.3)) as fake:
        client = make_client(anthropic_settings(fake.base_url), cache_dir=tmp_path)
        try:
            results = await asyncio.gather(*(client.complete(ModelRequest.of("q")) for _ in range(4)))
        finally:
            await client.aclose()
    assert len(fake.received) == 1
    assert [r.text for r in results] == ["slow"] * 4
    assert [r.cached for r in results] == [False, True, True, True]


async def test_failed_calls_are_not_cached(tmp_path: Path) -> None:
    async with FakeLLM([Reply(status=500), "recovered"]) as fake:
        client = make_client(anthropic_settings(fake.base_url), cache_dir=tmp_path)
        try:
            with pytest.raises(ModelError, match="api_status"):
                await client.complete(ModelRequest.of("q"))
            assert list(tmp_path.iterdir()) == []
            assert (await client.complete(ModelRequest.of("q"))).text == "recovered"
        finally:
            await client.aclose()
    assert len(fake.received) == 2


async def test_token_counts_are_cached_and_chat_completions_answers_too(png: bytes, tmp_path: Path) -> None:
    async with FakeLLM("chat") as fake:
        anthropic = make_client(anthropic_settings(fake.base_url), cache_dir=tmp_path)
        chat = make_client(openai_settings(fake.openai_base_url), cache_dir=tmp_path)
        try:
            assert await anthropic.count_tokens(mixed_request(png)) == 28
            assert await anthropic.count_tokens(mixed_request(png)) == 28
            assert (await chat.complete(mixed_request(png))).text == "chat"
            assert (await chat.complete(mixed_request(png))).cached
            assert await chat.count_tokens(mixed_request(png)) is None
        finally:
            await anthropic.aclose()
            await chat.aclose()
    assert [r.api for r in fake.received] == ["count_tokens", "chat_completions"]
    assert len(list(tmp_path.iterdir())) == 2


def test_the_key_is_canonical_and_covers_each_part() -> None:
    settings = anthropic_settings("http://127.0.0.1:1", thinking={"type": "enabled", "budget_tokens": 2048})
    reordered = anthropic_settings("http://127.0.0.1:2", thinking={"budget_tokens": 2048, "type": "enabled"})
    request = ModelRequest.of("q", system="s")
    key = cache_key("complete", settings, request)
    assert len(key) == 64 and int(key, 16) >= 0
    assert cache_key("complete", reordered, request) == key
    assert cache_key("count_tokens", settings, request) != key
    assert cache_key("complete", settings, ModelRequest.of("q", system="t")) != key
    assert cache_key("complete", settings.model_copy(update={"temperature": 0.5}), request) != key
    assert cache_key("complete", settings.model_copy(update={"model": "other"}), request) != key


async def test_a_damaged_entry_is_an_input_error_naming_the_file(tmp_path: Path) -> None:
    settings = anthropic_settings("http://127.0.0.1:1")
    path = tmp_path / f"{cache_key('complete', settings, ModelRequest.of('q'))}.json"
    path.write_text("{not json")
    client = make_client(settings, cache_dir=tmp_path)
    try:
        with pytest.raises(InputError, match="not a valid cache entry") as caught:
            await client.complete(ModelRequest.of("q"))
    finally:
        await client.aclose()
    assert caught.value.where == str(path) and caught.value.exit_code == 2
