"""The caching Messages proxy, with the real anthropic SDK pointed at it and the fake API as its upstream."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anthropic
import pytest

from capreplay.llm.cache_proxy import CachingProxy, proxy_key
from capreplay.testing.fake_llm import FakeLLM, Reply
from tests.support.llm import TEST_KEY, closed_port

MODEL = "claude-test"
ASK: dict[str, Any] = {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "Stage: explore"}]}


def sdk(proxy: CachingProxy, key: str = TEST_KEY) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key=key, base_url=proxy.base_url, max_retries=0)


async def test_a_second_identical_call_is_answered_from_the_cache_with_the_same_bytes(tmp_path: Path) -> None:
    async with FakeLLM(["first answer", "second answer"]) as fake, CachingProxy(fake.base_url, tmp_path) as proxy:
        client = sdk(proxy)
        try:
            first = await client.messages.with_raw_response.create(**ASK)
            again = await client.messages.with_raw_response.create(**ASK)
        finally:
            await client.close()
        assert len(fake.calls("messages")) == 1  # the second never reached the upstream
        forwarded = fake.calls("messages")[0]

    assert first.http_response.content == again.http_response.content
    texts = [b.text for r in (first, again) for b in (await r.parse()).content if b.type == "text"]
    assert texts == ["first answer", "first answer"]
    assert again.request_id == "req_fake_0001"
    # The fake's usage rule: "Stage: explore" is 14 characters (4 tokens), "first answer" 12 (3 tokens).
    assert [(c.cached, c.input_tokens, c.output_tokens) for c in proxy.calls] == [(False, 4, 3), (True, 4, 3)]
    # The caller's own credential went upstream as it came (this SDK sends it as a bearer token).
    assert forwarded.headers["authorization"] == f"Bearer {TEST_KEY}"
    assert forwarded.headers["host"] == f"127.0.0.1:{fake.port}"
    entries = sorted(tmp_path.iterdir())
    assert len(entries) == 1
    stored = json.loads(entries[0].read_text())
    assert stored["kind"] == "messages_http" and stored["path"] == "/v1/messages"
    assert TEST_KEY not in entries[0].read_text()


async def test_another_key_or_sdk_header_is_the_same_question_but_another_body_is_not(tmp_path: Path) -> None:
    async with FakeLLM(["one", "two"]) as fake, CachingProxy(fake.base_url, tmp_path) as proxy:
        client, other = sdk(proxy), sdk(proxy, key="sk-ant-another-key")
        try:
            one = await client.messages.create(**ASK)
            same = await other.messages.create(**ASK, extra_headers={"x-stainless-timeout": "5"})
            two = await client.messages.create(**{**ASK, "max_tokens": 65})
        finally:
            await client.close()
            await other.close()
    assert [b.text for m in (one, same, two) for b in m.content if b.type == "text"] == ["one", "one", "two"]
    assert len(fake.calls("messages")) == 2


def test_the_key_masks_volatile_parts_and_keeps_the_beta_header() -> None:
    tab = re.compile(r"(?<=Tab )[0-9A-F]{4}\b")
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": "Tab 1147: home"}]}]}
    moved = {"messages": [{"role": "user", "content": [{"type": "text", "text": "Tab 4300: home"}]}]}
    other = {"messages": [{"role": "user", "content": [{"type": "text", "text": "Tab 4300: away"}]}]}
    path = "/v1/messages"
    assert proxy_key(path, {}, body, [tab]) == proxy_key(path, {}, moved, [tab])
    assert proxy_key(path, {}, body, [tab]) != proxy_key(path, {}, other, [tab])
    assert proxy_key(path, {}, body) != proxy_key(path, {}, moved)
    assert proxy_key(path, {}, body) != proxy_key(path, {"anthropic-beta": "x-2026"}, body)
    assert proxy_key(path, {}, body) != proxy_key("/v1/messages?beta=true", {}, body)
    assert proxy_key(path, {}, body) == proxy_key(path, {"user-agent": "other", "x-api-key": "k"}, body)


async def test_an_error_status_is_passed_back_and_not_cached(tmp_path: Path) -> None:
    replies: list[Reply | str] = [Reply(status=529, message="scripted overload"), "after the outage"]
    async with FakeLLM(replies) as fake, CachingProxy(fake.base_url, tmp_path) as proxy:
        client = sdk(proxy)
        try:
            with pytest.raises(anthropic.APIStatusError) as failed:
                await client.messages.create(**ASK)
            later = await client.messages.create(**ASK)
        finally:
            await client.close()
    assert failed.value.status_code == 529
    assert "scripted overload" in str(failed.value)
    assert failed.value.request_id == "req_fake_0001"
    assert [b.text for b in later.content if b.type == "text"] == ["after the outage"]
    assert len(fake.calls("messages")) == 2  # asked again: the error was not stored
    assert [c.cached for c in proxy.calls] == [False]
    assert len(list(tmp_path.iterdir())) == 1


async def test_token_counts_are_cached_too(tmp_path: Path) -> None:
    count: dict[str, Any] = {"model": MODEL, "messages": ASK["messages"]}
    async with FakeLLM("unused") as fake, CachingProxy(fake.base_url, tmp_path) as proxy:
        client = sdk(proxy)
        try:
            first = await client.messages.count_tokens(**count)
            again = await client.messages.count_tokens(**count)
        finally:
            await client.close()
    assert first.input_tokens == again.input_tokens == 4
    assert len(fake.calls("count_tokens")) == 1
    assert [(c.path, c.cached) for c in proxy.calls] == [("/v1/messages/count_tokens", False),
                                                         ("/v1/messages/count_tokens", True)]  # fmt: skip


async def test_streaming_is_refused_and_nothing_goes_upstream(tmp_path: Path) -> None:
    async with FakeLLM("unused") as fake, CachingProxy(fake.base_url, tmp_path) as proxy:
        client = sdk(proxy)
        try:
            with pytest.raises(anthropic.BadRequestError, match='without "stream": true'):
                await client.messages.create(**ASK, stream=True)
        finally:
            await client.close()
    assert fake.received == []
    assert not tmp_path.exists() or list(tmp_path.iterdir()) == []


async def test_an_unreachable_upstream_is_a_502_naming_no_key(tmp_path: Path) -> None:
    async with CachingProxy(f"http://127.0.0.1:{closed_port()}", tmp_path) as proxy:
        client = sdk(proxy)
        try:
            with pytest.raises(anthropic.APIStatusError) as failed:
                await client.messages.create(**ASK)
        finally:
            await client.close()
    assert failed.value.status_code == 502
    assert "cannot reach the model API" in str(failed.value)
    assert TEST_KEY not in str(failed.value)
    assert proxy.calls == []


async def test_a_damaged_entry_is_an_error_answer_not_a_silent_call(tmp_path: Path) -> None:
    async with FakeLLM("fresh") as fake, CachingProxy(fake.base_url, tmp_path) as proxy:
        client = sdk(proxy)
        try:
            await client.messages.create(**ASK)
            entry = next(tmp_path.iterdir())
            entry.write_text("{not json")
            with pytest.raises(anthropic.InternalServerError, match="delete it to call again"):
                await client.messages.create(**ASK)
        finally:
            await client.close()
    assert len(fake.calls("messages")) == 1
