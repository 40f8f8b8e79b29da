"""The fake model API itself: its scripts, its token rule, and that it refuses what the real API refuses."""

from __future__ import annotations

import base64

import aiohttp
import pytest

from capreplay.errors import ModelError
from capreplay.llm import ModelRequest, make_client
from capreplay.testing.fake_llm import FakeLLM, Received, Reply, image_tokens, png_size, text_tokens
from tests.support.llm import anthropic_settings, png_file


def test_the_token_rule() -> None:
    assert [text_tokens(t) for t in ("", "a", "abcd", "abcde", "é" * 8)] == [0, 1, 1, 2, 2]
    assert png_size(png_file(150, 100)) == (150, 100)
    assert image_tokens(png_file(150, 100)) == 20
    assert image_tokens(png_file(1280, 800)) == 1366  # 1,024,000 / 750 = 1365.3, rounded up
    with pytest.raises(ValueError, match="not a PNG"):
        png_size(b"GIF89a" + bytes(30))


async def test_a_list_answers_in_order_then_the_default_then_an_error() -> None:
    async with FakeLLM(["one", Reply(text="two", stop_reason="stop_sequence")]) as fake:
        client = make_client(anthropic_settings(fake.base_url))
        try:
            assert (await client.complete(ModelRequest.of("a"))).text == "one"
            second = await client.complete(ModelRequest.of("b"))
            assert (second.text, second.stop_reason) == ("two", "stop_sequence")
            with pytest.raises(ModelError, match="no answer for call 2"):
                await client.complete(ModelRequest.of("c"))
            fake.default = "fallback"
            assert (await client.complete(ModelRequest.of("d"))).text == "fallback"
        finally:
            await client.aclose()
    assert [r.prompt for r in fake.received] == ["a", "b", "c", "d"]


async def test_a_function_script_sees_the_request_and_markers_pick_dict_answers(png: bytes) -> None:
    def script(received: Received) -> str:
        return f"{len(received.images)} image(s), {received.input_tokens} tokens, prompt {received.prompt!r}"

    async with FakeLLM(script) as fake, FakeLLM({"[A]": "alpha", "[B]": "beta"}, default="none") as marked:
        client = make_client(anthropic_settings(fake.base_url))
        by_marker = make_client(anthropic_settings(marked.base_url))
        try:
            answer = await client.complete(ModelRequest.of("look", png, system="sys"))
            assert answer.text == "1 image(s), 22 tokens, prompt 'sys\\nlook'"
            assert (await by_marker.complete(ModelRequest.of("task [B] now"))).text == "beta"
            assert (await by_marker.complete(ModelRequest.of("x", system="[A]"))).text == "alpha"
            assert (await by_marker.complete(ModelRequest.of("no marker"))).text == "none"
        finally:
            await client.aclose()
            await by_marker.aclose()


async def test_requests_the_real_api_would_refuse_are_refused_and_recorded() -> None:
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    good = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    gif = base64.b64encode(b"GIF89a" + bytes(30)).decode()
    bad_image = {
        **good,
        "messages": [
            {
                "role": "user",
                "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": gif}}],
            }
        ],
    }
    cases = [
        ({"anthropic-version": "2023-06-01"}, good, 401),
        ({"x-api-key": "k"}, good, 400),
        (headers, {**good, "max_tokens": None}, 400),
        (headers, {**good, "messages": []}, 400),
        (headers, bad_image, 400),
        (headers, good, 200),
    ]
    async with FakeLLM("hello") as fake, aiohttp.ClientSession() as session:
        for sent_headers, body, status in cases:
            async with session.post(f"{fake.base_url}/v1/messages", json=body, headers=sent_headers) as response:
                assert response.status == status, body
                data = await response.json()
                if status != 200:
                    assert data["type"] == "error" and data["error"]["type"]
        async with session.post(f"{fake.base_url}/v1/messages", data=b"not json", headers=headers) as response:
            assert response.status == 400
    assert len(fake.received) == len(cases) + 1
    assert fake.received[-2].body == good


async def test_chat_completions_refuses_an_image_that_is_not_a_data_url() -> None:
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://example.invalid/a.png"}}]}
        ],
    }
    async with (
        FakeLLM("x") as fake,
        aiohttp.ClientSession() as session,
        session.post(f"{fake.openai_base_url}/chat/completions", json=body) as response,
    ):
        assert response.status == 400
        assert "data:image/png" in (await response.json())["error"]["message"]
