"""The Anthropic client: the real SDK over real HTTP to the fake Messages API on 127.0.0.1."""

from __future__ import annotations

import base64
import time

import pytest

from capreplay.errors import ModelError, UsageError
from capreplay.llm import AnthropicClient, ModelRequest, make_client
from capreplay.testing.fake_llm import FakeLLM, Reply
from tests.support.llm import TEST_KEY, anthropic_settings, closed_port, mixed_request


async def test_text_and_image_reach_the_api_and_usage_is_parsed(png: bytes) -> None:
    async with FakeLLM({"MARK-B": "wrong", "MARK-A": "answer A"}) as fake:
        client = make_client(anthropic_settings(fake.base_url))
        try:
            result = await client.complete(mixed_request(png))
        finally:
            await client.aclose()
    assert result.text == "answer A"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (28, 2)  # "answer A": 8 chars -> 2
    assert result.usage.raw == {
        "input_tokens": 28,
        "output_tokens": 2,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "service_tier": "standard",
    }
    assert (result.stop_reason, result.model, result.request_id) == ("end_turn", "claude-test", "req_fake_0001")
    assert result.latency_s > 0 and not result.cached

    [sent] = fake.received
    assert sent.api == "messages"
    # this SDK version sends the key as a bearer token; earlier ones used x-api-key
    assert TEST_KEY in (sent.headers.get("x-api-key"), sent.headers.get("authorization", "").removeprefix("Bearer "))
    assert sent.body["model"] == "claude-test" and sent.body["max_tokens"] == 256
    assert sent.body["system"] == "sys prompt"
    assert sent.body["thinking"] == {"type": "disabled"}
    assert "temperature" not in sent.body
    assert sent.body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Question MARK-A"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(png).decode()},
                },
                {"type": "text", "text": "end"},
            ],
        }
    ]
    assert sent.images == [png]


async def test_count_tokens_asks_the_count_endpoint_and_leaves_the_script_alone(png: bytes) -> None:
    async with FakeLLM(["first answer"]) as fake:
        client = AnthropicClient(anthropic_settings(fake.base_url))
        try:
            assert await client.count_tokens(mixed_request(png)) == 28
            assert await client.count_tokens(ModelRequest.of("abcde")) == 2
            assert (await client.complete(ModelRequest.of("q"))).text == "first answer"
        finally:
            await client.aclose()
    assert [r.api for r in fake.received] == ["count_tokens", "count_tokens", "messages"]
    assert "max_tokens" not in fake.received[0].body


@pytest.mark.parametrize(
    ("status", "kind"),
    [(429, "rate_limit"), (500, "api_status"), (529, "api_status"), (400, "api_status")],
)
async def test_an_error_status_is_mapped_and_never_retried(status: int, kind: str) -> None:
    async with FakeLLM(Reply(status=status, message="scripted failure")) as fake:
        client = make_client(anthropic_settings(fake.base_url))
        try:
            with pytest.raises(ModelError) as caught:
                await client.complete(ModelRequest.of("q"))
        finally:
            await client.aclose()
    assert len(fake.received) == 1  # the SDK would retry 429 and 5xx by default
    error = caught.value
    assert (error.kind, error.status, error.request_id) == (kind, status, "req_fake_0001")
    assert "scripted failure" in error.line() and error.line().startswith("model claude-test: ")
    assert error.exit_code == 1


async def test_a_slow_answer_is_a_timeout_after_one_request() -> None:
    async with FakeLLM(Reply(text="late", delay_s=10)) as fake:
        client = make_client(anthropic_settings(fake.base_url, timeout_s=0.5))
        started = time.monotonic()
        try:
            with pytest.raises(ModelError) as caught:
                await client.complete(ModelRequest.of("q"))
        finally:
            await client.aclose()
        elapsed = time.monotonic() - started
    assert caught.value.kind == "timeout"
    assert 0.4 < elapsed < 3
    assert len(fake.received) == 1


async def test_an_unreachable_endpoint_is_a_connection_error() -> None:
    client = make_client(anthropic_settings(f"http://127.0.0.1:{closed_port()}"))
    try:
        with pytest.raises(ModelError) as caught:
            await client.complete(ModelRequest.of("q"))
    finally:
        await client.aclose()
    assert caught.value.kind == "connection"


async def test_the_base_url_can_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    async with FakeLLM("from env") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        client = make_client(anthropic_settings("").model_copy(update={"base_url": None}))
        try:
            assert (await client.complete(ModelRequest.of("q"))).text == "from env"
        finally:
            await client.aclose()
    assert len(fake.received) == 1


async def test_temperature_is_sent_and_a_long_answer_stops_at_max_tokens() -> None:
    async with FakeLLM("x" * 100) as fake:
        client = make_client(anthropic_settings(fake.base_url, max_tokens=5, temperature=0.0, thinking=None))
        try:
            result = await client.complete(ModelRequest.of("q"))
        finally:
            await client.aclose()
    assert fake.received[0].body["temperature"] == 0.0
    assert "thinking" not in fake.received[0].body
    assert (result.text, result.usage.output_tokens, result.stop_reason) == ("x" * 20, 5, "max_tokens")


def test_a_missing_key_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(UsageError, match="ANTHROPIC_API_KEY is not set") as caught:
        make_client(anthropic_settings("http://127.0.0.1:1"))
    assert caught.value.exit_code == 2


def test_settings_of_another_provider_are_refused() -> None:
    settings = anthropic_settings("http://127.0.0.1:1", provider="openai_compatible", thinking=None)
    with pytest.raises(UsageError, match="not 'anthropic'"):
        AnthropicClient(settings)
