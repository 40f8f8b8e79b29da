"""The OpenAI-compatible client over aiohttp against the fake Chat Completions API on 127.0.0.1."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from pydantic import ValidationError

from capreplay.errors import ModelError, UsageError
from capreplay.llm import ModelRequest, OpenAICompatClient, make_client
from capreplay.testing.fake_llm import FakeLLM, Reply
from tests.support.llm import OPENAI_TEST_KEY, closed_port, mixed_request, openai_settings


async def test_text_and_image_as_a_data_url_and_usage_parsed(png: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_TEST_KEY)
    async with FakeLLM({"MARK-A": "answer A"}) as fake:
        client = make_client(openai_settings(fake.openai_base_url, temperature=0.2))
        try:
            result = await client.complete(mixed_request(png))
        finally:
            await client.aclose()
    assert result.text == "answer A"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (28, 2)
    assert result.usage.raw == {"prompt_tokens": 28, "completion_tokens": 2, "total_tokens": 30}
    assert (result.stop_reason, result.model, result.request_id) == ("stop", "local-test", "req_fake_0001")

    [sent] = fake.received
    assert sent.api == "chat_completions"
    assert sent.headers["authorization"] == f"Bearer {OPENAI_TEST_KEY}"
    assert sent.body == {
        "model": "local-test",
        "max_tokens": 256,
        "temperature": 0.2,
        "messages": [
            {"role": "system", "content": "sys prompt"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Question MARK-A"},
                    {
                        "type": "image_url",
                        "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()},
                    },
                    {"type": "text", "text": "end"},
                ],
            },
        ],
    }


async def test_without_a_key_no_authorization_header_is_sent() -> None:
    async with FakeLLM("ok") as fake:
        client = make_client(openai_settings(fake.openai_base_url))
        try:
            assert (await client.complete(ModelRequest.of("q"))).text == "ok"
            assert await client.count_tokens(ModelRequest.of("q")) is None
        finally:
            await client.aclose()
    [sent] = fake.received  # count_tokens made no request
    assert "authorization" not in sent.headers


@pytest.mark.parametrize(("status", "kind"), [(429, "rate_limit"), (500, "api_status"), (404, "api_status")])
async def test_an_error_status_is_mapped_and_never_retried(status: int, kind: str) -> None:
    async with FakeLLM(Reply(status=status, message="scripted failure")) as fake:
        client = make_client(openai_settings(fake.openai_base_url))
        try:
            with pytest.raises(ModelError) as caught:
                await client.complete(ModelRequest.of("q"))
        finally:
            await client.aclose()
    assert len(fake.received) == 1
    assert (caught.value.kind, caught.value.status, caught.value.request_id) == (kind, status, "req_fake_0001")
    assert f"status {status}: scripted failure" in caught.value.line()


async def test_a_slow_answer_is_a_timeout() -> None:
    async with FakeLLM(Reply(text="late", delay_s=10)) as fake:
        client = make_client(openai_settings(fake.openai_base_url, timeout_s=0.5))
        try:
            with pytest.raises(ModelError) as caught:
                await client.complete(ModelRequest.of("q"))
        finally:
            await client.aclose()
    assert caught.value.kind == "timeout"
    assert len(fake.received) == 1


async def test_an_unreachable_endpoint_is_a_connection_error() -> None:
    client = make_client(openai_settings(f"http://127.0.0.1:{closed_port()}/v1"))
    try:
        with pytest.raises(ModelError) as caught:
            await client.complete(ModelRequest.of("q"))
    finally:
        await client.aclose()
    assert caught.value.kind == "connection"


@pytest.fixture
async def html_server() -> AsyncIterator[str]:
    """A server that answers every Chat Completions call with an HTML page, as a misconfigured proxy might."""

    async def page(_: web.Request) -> web.Response:
        return web.Response(text="<html>welcome</html>", content_type="text/html")

    app = web.Application()
    app.router.add_post("/v1/chat/completions", page)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    finally:
        await runner.cleanup()


async def test_a_response_that_is_not_chat_completions_is_a_bad_response(html_server: str) -> None:
    client = make_client(openai_settings(html_server))
    try:
        with pytest.raises(ModelError, match="welcome") as caught:
            await client.complete(ModelRequest.of("q"))
    finally:
        await client.aclose()
    assert (caught.value.kind, caught.value.status) == ("bad_response", 200)


def test_thinking_is_refused_for_chat_completions() -> None:
    with pytest.raises(ValidationError, match="thinking is only supported by the anthropic provider"):
        openai_settings("http://127.0.0.1:1/v1", thinking={"type": "enabled", "budget_tokens": 2048})
    assert openai_settings("http://127.0.0.1:1/v1", thinking={"type": "disabled"}).thinking == {"type": "disabled"}


def test_the_openai_client_refuses_anthropic_settings() -> None:
    settings = openai_settings("http://127.0.0.1:1/v1").model_copy(update={"provider": "anthropic"})
    with pytest.raises(UsageError, match="not 'openai_compatible'"):
        OpenAICompatClient(settings)
