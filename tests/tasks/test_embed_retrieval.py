"""Dense retrieval for multi-hop pairs: pages embedded once by the fake API over HTTP, ranked by cosine.

The fake embeds a text as its hashed bag of lower-cased words (see :mod:`capreplay.testing.fake_llm`): by
that rule "ridge" falls in bucket 36, "hut" in 0, "tent" in 26 and "kell" in 25 of 64, so the cosines of
texts made of those words are worked out by hand below.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from capreplay.cli import main
from capreplay.llm import EmbeddingSettings, make_embedder
from capreplay.llm.embeddings import Embedder
from capreplay.tasks.meter import Meter
from capreplay.tasks.multihop.corpus import PageDoc, page_documents
from capreplay.tasks.multihop.embed import EMBED_CHARS, EmbeddingRetrieval, EmbeddingRetriever, cosine
from capreplay.tasks.multihop.pairs import choose_pairs
from capreplay.tasks.snapshot_pages import SnapshotView, open_snapshot
from capreplay.testing.fake_llm import FakeLLM
from tests.support.paths import ROOT
from tests.support.world_generation import HUT, TENTS, TRAIL

WORLD = ROOT / "snapshots" / "world"


@pytest.fixture(scope="module")
def world() -> SnapshotView:
    return open_snapshot(WORLD)


@pytest.fixture(autouse=True)
def no_model_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No setting from the environment may send a call anywhere but the fake server."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)


class NoModel:
    """A chat client that must not be called: retrieval makes embeddings calls only."""

    settings = None

    async def complete(self, request: object) -> object:
        raise AssertionError("retrieval asked the chat model")


@pytest.fixture
async def fake() -> AsyncIterator[FakeLLM]:
    async with FakeLLM() as server:
        yield server


def embedder_of(fake: FakeLLM, cache: Path | None = None, **changes: object) -> Embedder:
    values: dict[str, object] = {"model": "embed-test", "base_url": fake.openai_base_url, "timeout_s": 10.0}
    return make_embedder(EmbeddingSettings.model_validate(values | changes), cache_dir=cache)


def doc(name: str, title: str, text: str) -> PageDoc:
    url = f"https://site.test/{name}"
    return PageDoc(final_url=url, title=title, text=text, graph_url=url)


async def test_cosines_by_hand_ties_by_url_and_a_page_without_text_scores_zero(fake: FakeLLM) -> None:
    seed = doc("seed", "Ridge", "hut")
    docs = [doc("z-none", "tent", ""), seed, doc("near", "", "ridge tent"), doc("a-none", "", ""),
            doc("same", "Hut", "ridge")]  # fmt: skip
    meter = Meter(NoModel())  # type: ignore[arg-type]
    embedder = embedder_of(fake, batch_size=2)
    try:
        retriever = await EmbeddingRetriever.build(docs, meter, embedder)
    finally:
        await embedder.aclose()
    ranked = [(d.final_url.rsplit("/", 1)[1], round(score, 6)) for d, score in retriever.ranked(seed)]
    # "same" has the seed's words; "near" shares "ridge" of its two (1/sqrt2 * 1/sqrt2); the rest share none
    assert ranked == [("same", 1.0), ("near", 0.5), ("a-none", 0.0), ("z-none", 0.0)]
    # title and text are embedded together, the page without either is not sent, in calls of two texts
    sent = [call.body["input"] for call in fake.calls("embeddings")]
    assert sent == [["tent", "Ridge\nhut"], ["ridge tent", "Hut\nridge"]]
    [(stage, cost)] = meter.cost().items()
    assert stage == "retrieval" and cost.calls == 2 and cost.output_tokens == 0
    # by the fake's rule of a token per four characters: "tent" 1, "Ridge\nhut" 3, "ridge tent" 3, "Hut\nridge" 3
    assert cost.input_tokens == 10


async def test_only_the_start_of_a_long_page_is_embedded(fake: FakeLLM) -> None:
    long = doc("long", "Title", "kell " * (EMBED_CHARS // 5) + "TAIL")
    embedder = embedder_of(fake)
    try:
        await EmbeddingRetriever.build([long], Meter(NoModel()), embedder)  # type: ignore[arg-type]
    finally:
        await embedder.aclose()
    [[text]] = [call.body["input"] for call in fake.calls("embeddings")]
    assert text == "Title\n" + "kell " * 799 + "kell" and "TAIL" not in text


async def test_the_kell_ridge_trail_is_nearer_its_hut_than_the_tents_page(world: SnapshotView, fake: FakeLLM) -> None:
    assert world.graph is not None
    pages = {d.url: d for d in page_documents(world, world.graph)}
    trail, hut, tents = pages[TRAIL], pages[HUT], pages[TENTS]
    embedder = embedder_of(fake)
    try:
        retriever = await EmbeddingRetriever.build([tents, trail, hut], Meter(NoModel()), embedder)  # type: ignore[arg-type]
    finally:
        await embedder.aclose()
    # the trail and hut pages share the names Kell Ridge Traverse, Kell Valley, Ridge End Hut and 710 m;
    # the tents page shares with either only the world's footer
    assert [d.url for d, _ in retriever.ranked(trail)] == [HUT, TENTS]
    assert [d.url for d, _ in retriever.ranked(hut)] == [TRAIL, TENTS]
    (_, near), (_, far) = retriever.ranked(trail)
    assert near > far > 0


async def test_pairs_come_from_the_embedding_ranking(world: SnapshotView, fake: FakeLLM) -> None:
    assert world.graph is not None
    docs = page_documents(world, world.graph)
    embedder = embedder_of(fake)
    try:
        retriever = await EmbeddingRetrieval(embedder)(docs, Meter(NoModel()))  # type: ignore[arg-type]
    finally:
        await embedder.aclose()
    texts = [t for call in fake.calls("embeddings") for t in call.body["input"]]
    assert len(texts) == len(docs) and len(fake.calls("embeddings")) == math.ceil(len(docs) / 32)
    pairs = choose_pairs(docs, retriever, count=4, seed=3, top_k=1)
    assert len(pairs) == 4
    for pair in pairs:
        [first] = [d for d in docs if d.url == pair.seed]
        nearest = next(d for d, _ in retriever.ranked(first) if d.url != first.url)
        assert pair.partner == nearest.url and pair.score > 0


def test_cosine_of_unnormalised_and_zero_vectors() -> None:
    assert cosine([3.0, 4.0], [6.0, 8.0]) == pytest.approx(1.0)
    assert cosine([1.0, 0.0], [1.0, 1.0]) == pytest.approx(1 / math.sqrt(2))
    assert cosine([0.0, 0.0], [1.0, 1.0]) == 0.0 and cosine([], []) == 0.0


# ---------------------------------------------------------------------------------------------- command line


def run_cli(*args: str) -> int:
    return main(["tasks", "multihop", str(WORLD), *args])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--retrieval", "embeddings"], "--retrieval embeddings needs --embedding-model and --embedding-base-url"),
        (["--retrieval", "embeddings", "--embedding-model", "m"], "needs --embedding-model and --embedding-base-url"),
        (["--embedding-model", "m"], "--embedding-model and --embedding-base-url are for --retrieval embeddings"),
    ],
)
def test_embeddings_without_a_model_or_endpoint_is_a_usage_error(
    options: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli("-o", str(tmp_path / "batch"), *options) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err
    assert not (tmp_path / "batch").exists()


async def test_the_command_line_retrieves_by_embeddings_counts_them_and_reruns_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CAPREPLAY_TASKS_API_KEY", "generation-key")
    declined = json.dumps({"question": None, "reason": "nothing to bridge"})
    async with FakeLLM(declined) as fake:
        options = ["--count", "2", "--retrieval", "embeddings", "--embedding-model", "embed-test",
                   "--embedding-base-url", fake.openai_base_url, "--base-url", fake.base_url,
                   "--cache", str(tmp_path / "cache")]  # fmt: skip
        first = await asyncio.to_thread(run_cli, "-o", str(tmp_path / "one"), *options)
        embedded = len(fake.calls("embeddings"))
        again = await asyncio.to_thread(run_cli, "-o", str(tmp_path / "two"), *options)
    assert (first, again) == (1, 1)  # no draft, so no task proven
    # the world's 74 loads are 57 pages by final URL, embedded in calls of 32; none again from the cache
    assert embedded == 2 and len(fake.calls("embeddings")) == embedded
    assert all("authorization" not in call.headers for call in fake.calls("embeddings"))  # no OPENAI_API_KEY
    one = json.loads((tmp_path / "one" / "batch.json").read_text())
    two = json.loads((tmp_path / "two" / "batch.json").read_text())
    assert one["inputs"]["retrieval"] == 'embeddings {"dimensions": null, "model": "embed-test", ' \
                                         '"provider": "openai_compatible"}'  # fmt: skip
    assert one["made"]["cost"]["retrieval"]["calls"] == 2 and one["made"]["cost"]["retrieval"]["output_tokens"] == 0
    assert one["made"]["cost"]["multihop"]["calls"] == 2
    assert one["inputs"] == two["inputs"]  # the same pairs from the cached vectors
    assert "rejected" in capsys.readouterr().out
