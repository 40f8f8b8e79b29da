"""The embeddings client over aiohttp against the fake API's /v1/embeddings on 127.0.0.1, and its cache."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from capreplay.errors import ModelError
from capreplay.llm import EmbeddingSettings, embed_all, embedding_key, make_embedder
from capreplay.testing.fake_llm import FakeLLM, Reply
from tests.support.llm import OPENAI_TEST_KEY, closed_port


def settings(base_url: str, **changes: object) -> EmbeddingSettings:
    values: dict[str, object] = {"model": "embed-test", "base_url": base_url, "timeout_s": 10.0}
    return EmbeddingSettings.model_validate(values | changes)


def unit(size: int, counts: dict[int, int]) -> list[float]:
    """A vector of ``size`` with ``counts`` at their buckets, divided by its length (the fake's rule, by hand)."""
    norm = math.sqrt(sum(c * c for c in counts.values()))
    return [counts.get(i, 0) / norm for i in range(size)]


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


# By the fake's rule: the first 8 bytes of sha256 modulo 64 put "ridge" in bucket 36, "hut" in 0, "tent" in 26.
RIDGE, HUT, TENT = 36, 0, 26


async def test_the_fakes_rule_on_two_texts_and_their_cosine() -> None:
    async with FakeLLM() as fake:
        embedder = make_embedder(settings(fake.openai_base_url))
        try:
            result = await embedder.embed(["Ridge hut, RIDGE!", "hut tent"])
        finally:
            await embedder.aclose()
    first, second = result.vectors
    assert first == pytest.approx(unit(64, {RIDGE: 2, HUT: 1}))
    assert second == pytest.approx(unit(64, {HUT: 1, TENT: 1}))
    # they share only "hut": 1/sqrt(5) * 1/sqrt(2)
    assert cosine(first, second) == pytest.approx(1 / math.sqrt(10))
    # usage by the fake's token rule: 17 and 8 characters, 5 + 2 tokens
    assert (result.input_tokens, result.model, result.request_id) == (7, "embed-test", "req_fake_0001")
    assert not result.cached


async def test_texts_are_batched_and_vectors_come_back_in_input_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_TEST_KEY)
    texts = ["ridge", "hut", "tent", "ridge hut", "tent tent"]
    seen: list[int] = []
    async with FakeLLM() as fake:
        embedder = make_embedder(settings(fake.openai_base_url, batch_size=2, dimensions=64))
        try:
            vectors = await embed_all(embedder, texts, on_call=lambda r: seen.append(len(r.vectors)))
        finally:
            await embedder.aclose()
    assert [call.body["input"] for call in fake.calls("embeddings")] == [["ridge", "hut"], ["tent", "ridge hut"],
                                                                          ["tent tent"]]  # fmt: skip
    assert seen == [2, 2, 1]
    assert fake.received[0].body == {"model": "embed-test", "input": ["ridge", "hut"], "dimensions": 64}
    assert fake.received[0].headers["authorization"] == f"Bearer {OPENAI_TEST_KEY}"
    # the fake lists each call's vectors in reverse; the client orders them by index
    assert vectors == [
        unit(64, {RIDGE: 1}),
        unit(64, {HUT: 1}),
        unit(64, {TENT: 1}),
        pytest.approx(unit(64, {RIDGE: 1, HUT: 1})),
        unit(64, {TENT: 2}),
    ]


async def test_without_a_key_no_authorization_header_and_no_texts_no_call() -> None:
    async with FakeLLM() as fake:
        embedder = make_embedder(settings(fake.openai_base_url, dimensions=8))
        try:
            assert await embed_all(embedder, []) == []
            [vector] = (await embedder.embed(["hut"])).vectors
            with pytest.raises(ValueError, match="1 to 32 texts, not 33"):
                await embedder.embed(["hut"] * 33)
        finally:
            await embedder.aclose()
    [sent] = fake.received
    assert "authorization" not in sent.headers
    assert len(vector) == 8 and sorted(vector) == [0.0] * 7 + [1.0]


@pytest.mark.parametrize(("status", "kind"), [(429, "rate_limit"), (500, "api_status"), (404, "api_status")])
async def test_an_error_status_is_mapped_and_never_retried(status: int, kind: str) -> None:
    async with FakeLLM(embedding_script=[Reply(status=status, message="scripted failure")]) as fake:
        embedder = make_embedder(settings(fake.openai_base_url))
        try:
            with pytest.raises(ModelError) as caught:
                await embedder.embed(["hut"])
            again = await embedder.embed(["hut"])  # past the scripted list: answered by the rule
        finally:
            await embedder.aclose()
    assert len(fake.received) == 2
    assert (caught.value.kind, caught.value.status, caught.value.request_id) == (kind, status, "req_fake_0001")
    assert f"status {status}: scripted failure" in caught.value.line()
    assert again.vectors == [unit(64, {HUT: 1})]


async def test_an_empty_text_is_refused_by_the_api_as_by_the_real_one() -> None:
    async with FakeLLM() as fake:
        embedder = make_embedder(settings(fake.openai_base_url))
        try:
            with pytest.raises(ModelError, match="must not be empty") as caught:
                await embedder.embed(["hut", ""])
        finally:
            await embedder.aclose()
    assert (caught.value.kind, caught.value.status) == ("api_status", 400)


async def test_a_slow_answer_is_a_timeout_and_a_closed_port_a_connection_error() -> None:
    async with FakeLLM(embedding_script=[Reply(delay_s=10)]) as fake:
        slow = make_embedder(settings(fake.openai_base_url, timeout_s=0.5))
        closed = make_embedder(settings(f"http://127.0.0.1:{closed_port()}/v1"))
        try:
            with pytest.raises(ModelError) as late:
                await slow.embed(["hut"])
            with pytest.raises(ModelError) as unreachable:
                await closed.embed(["hut"])
        finally:
            await slow.aclose()
            await closed.aclose()
    assert (late.value.kind, unreachable.value.kind) == ("timeout", "connection")


@pytest.fixture
async def odd_server() -> AsyncIterator[str]:
    """An embeddings endpoint that answers with base64 vectors, as servers do when asked for that encoding."""

    async def answer(_: web.Request) -> web.Response:
        return web.json_response({"data": [{"index": 0, "embedding": "AACAPw=="}], "model": "m"})

    app = web.Application()
    app.router.add_post("/v1/embeddings", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    finally:
        await runner.cleanup()


async def test_a_response_without_float_vectors_or_with_too_few_is_a_bad_response(odd_server: str) -> None:
    embedder = make_embedder(settings(odd_server))
    try:
        with pytest.raises(ModelError, match="not an embeddings response for 1 texts") as encoded:
            await embedder.embed(["hut"])
        with pytest.raises(ModelError, match="for 2 texts") as short:
            await embedder.embed(["hut", "tent"])
    finally:
        await embedder.aclose()
    assert (encoded.value.kind, encoded.value.status, short.value.kind) == ("bad_response", 200, "bad_response")


async def test_a_rerun_from_the_cache_makes_no_call_and_gives_the_same_vectors(tmp_path: Path) -> None:
    texts = ["Ridge hut, RIDGE!", "hut tent", "tent"]
    async with FakeLLM() as fake, FakeLLM(embedding_script=[Reply(status=500)]) as other:
        first = make_embedder(settings(fake.openai_base_url, batch_size=2), cache_dir=tmp_path)
        # another endpoint and timeout: the same model's vectors, so the same keys
        again = make_embedder(settings(other.openai_base_url, batch_size=2, timeout_s=5.0), cache_dir=tmp_path)
        try:
            vectors = await embed_all(first, texts)
            cached: list[bool] = []
            repeated = await embed_all(again, texts, on_call=lambda r: cached.append(r.cached))
        finally:
            await first.aclose()
            await again.aclose()
    assert len(fake.received) == 2 and other.received == []
    assert repeated == vectors and cached == [True, True]
    stored = sorted(p.name for p in tmp_path.iterdir())
    assert stored == sorted(f"{embedding_key(first.settings, batch)}.json" for batch in (texts[:2], texts[2:]))


def test_the_key_holds_the_model_dimensions_and_texts_not_the_endpoint() -> None:
    base = settings("http://127.0.0.1:1/v1")
    key = embedding_key(base, ["a", "b"])
    assert embedding_key(settings("http://127.0.0.1:2/v1", timeout_s=3.0, batch_size=5), ["a", "b"]) == key
    assert embedding_key(base, ["b", "a"]) != key
    assert embedding_key(base.model_copy(update={"model": "other"}), ["a", "b"]) != key
    assert embedding_key(base.model_copy(update={"dimensions": 32}), ["a", "b"]) != key


async def test_the_key_stays_out_of_errors_and_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_TEST_KEY)
    async with FakeLLM(embedding_script=[Reply(status=401, message="bad key")]) as fake:
        embedder = make_embedder(settings(fake.openai_base_url), cache_dir=tmp_path)
        try:
            with pytest.raises(ModelError) as refused:
                await embedder.embed(["hut"])
            await embedder.embed(["hut"])
        finally:
            await embedder.aclose()
    assert fake.received[0].headers["authorization"] == f"Bearer {OPENAI_TEST_KEY}"
    error = refused.value
    kept = [f"{error!s} {error!r} {error.line()}", repr(embedder), *(p.read_text() for p in tmp_path.iterdir())]
    assert all(OPENAI_TEST_KEY not in text for text in kept)
