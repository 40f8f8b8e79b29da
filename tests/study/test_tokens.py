"""Offline token counting: the shipped o200k_base rank file, image tokens, representation tokens."""

from __future__ import annotations

import hashlib
import socket
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import tiktoken_ext.openai_public
from hypothesis import given, settings, strategies as st
from tiktoken.load import load_tiktoken_bpe

from capreplay.errors import CapreplayError
from capreplay.study.tokens import count as tokens
from capreplay.study.tokens.count import (
    O200K_BASE_RANK_FILE,
    O200K_BASE_SHA256,
    PATCH_PX,
    TIER_LIMITS,
    ImageTier,
    count_o200k,
    image_tokens,
    load_o200k,
    o200k_encoding,
    representation_tokens,
)


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No socket may connect, and tiktoken gets an empty cache directory so nothing is served from a cache."""

    def refuse(self: socket.socket, address: Any) -> None:
        raise AssertionError(f"network connection attempted to {address!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    cache = tmp_path / "tiktoken-cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    return cache


def test_shipped_rank_file_is_o200k_base() -> None:
    assert hashlib.sha256(O200K_BASE_RANK_FILE.read_bytes()).hexdigest() == O200K_BASE_SHA256


def test_hello_world_is_the_known_o200k_encoding(offline: Path) -> None:
    encoding = load_o200k()
    assert encoding.name == "o200k_base"
    assert encoding.encode("hello world") == [24912, 2375]
    assert encoding.n_vocab == 200019


def test_count_o200k_counts_the_known_string() -> None:
    assert count_o200k("hello world") == 2
    assert count_o200k("") == 0


def test_encoding_is_built_once_per_process() -> None:
    assert o200k_encoding() is o200k_encoding()


def test_encoding_matches_tiktokens_own_definition(monkeypatch: pytest.MonkeyPatch, offline: Path) -> None:
    """tiktoken's o200k_base(), fed our file instead of its download, gives exactly our encoding."""
    asked: list[tuple[str, str | None]] = []

    def from_shipped_file(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        asked.append((url, expected_hash))
        return load_tiktoken_bpe(str(O200K_BASE_RANK_FILE), expected_hash=expected_hash)

    monkeypatch.setattr(tiktoken_ext.openai_public, "load_tiktoken_bpe", from_shipped_file)
    reference = tiktoken.Encoding(**tiktoken_ext.openai_public.o200k_base())
    ours = load_o200k()

    [(url, expected_hash)] = asked
    assert url.endswith("/o200k_base.tiktoken") and expected_hash == O200K_BASE_SHA256
    assert ours._pat_str == reference._pat_str
    assert ours._special_tokens == reference._special_tokens
    assert ours._mergeable_ranks == reference._mergeable_ranks
    text = "Price: $1,299.00 — naïve café; 東京 <b>bold</b>\r\n\tx = f(y) // 10,000 rows"
    assert ours.encode(text) == reference.encode(text)


def test_special_token_text_is_counted_as_plain_text() -> None:
    # A page may contain "<|endoftext|>" literally; it is text there, not a control token.
    assert count_o200k("<|endoftext|>") > 1
    assert o200k_encoding().encode("<|endoftext|>", allowed_special="all") == [199999]


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_counting_covers_the_whole_text(text: str) -> None:
    encoding = o200k_encoding()
    ids = encoding.encode_ordinary(text)
    assert count_o200k(text) == len(ids)
    assert encoding.decode(ids) == text


def test_damaged_rank_file_is_refused(tmp_path: Path, offline: Path) -> None:
    damaged = tmp_path / "o200k_base.tiktoken"
    data = bytearray(O200K_BASE_RANK_FILE.read_bytes())
    data[100] ^= 0x01
    damaged.write_bytes(bytes(data))

    with pytest.raises(CapreplayError) as info:
        load_o200k(damaged)
    assert info.value.where == str(damaged)
    assert "sha256" in info.value.message and O200K_BASE_SHA256 in info.value.message
    assert str(damaged) in info.value.line()


def test_damaged_rank_file_is_refused_even_when_tiktoken_cached_a_good_copy(tmp_path: Path, offline: Path) -> None:
    rank_file = tmp_path / "o200k_base.tiktoken"
    rank_file.write_bytes(O200K_BASE_RANK_FILE.read_bytes())
    load_o200k(rank_file)
    assert any(offline.iterdir()), "tiktoken was expected to keep a copy in its cache directory"

    rank_file.write_bytes(rank_file.read_bytes()[:-10])
    with pytest.raises(CapreplayError, match="sha256"):
        load_o200k(rank_file)


def test_missing_rank_file_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "o200k_base.tiktoken"
    with pytest.raises(CapreplayError, match="cannot read the o200k_base rank file") as info:
        load_o200k(missing)
    assert info.value.where == str(missing)


def test_rank_file_is_found_relative_to_the_package() -> None:
    assert Path(tokens.__file__).resolve().parent / "data" / "o200k_base.tiktoken" == O200K_BASE_RANK_FILE


# --- images ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("tier", ["standard", "high"])
def test_study_screenshot_is_not_resized_and_costs_1334_tokens(tier: ImageTier) -> None:
    cost = image_tokens(1280, 800, tier)
    assert (cost.resized_width, cost.resized_height) == (1280, 800)
    assert not cost.resized
    assert (cost.padded_width, cost.padded_height) == (1288, 812)
    assert cost.tokens == 1334


def test_anthropic_a4_example_is_resized_by_the_token_budget() -> None:
    # The worked example in Anthropic's "How Claude resizes and pads images": both edges are under
    # 1568 px, but 39 x 55 = 2145 tokens exceeds the budget.
    cost = image_tokens(1075, 1520)
    assert cost.resized
    assert (cost.resized_width, cost.resized_height) == (924, 1307)
    assert (cost.padded_width, cost.padded_height) == (924, 1316)
    assert cost.tokens == 33 * 47


def test_high_tier_keeps_a_larger_image() -> None:
    assert image_tokens(2000, 1250, "standard").resized
    high = image_tokens(2000, 1250, "high")
    assert not high.resized
    assert high.tokens == 72 * 45


def test_tiny_and_extreme_images() -> None:
    assert image_tokens(1, 1).tokens == 1
    assert (image_tokens(1, 1).padded_width, image_tokens(1, 1).padded_height) == (28, 28)
    wide = image_tokens(8000, 1)
    assert (wide.resized_width, wide.resized_height) == (1568, 1)
    assert wide.tokens == 56


@pytest.mark.parametrize(("width", "height"), [(0, 10), (10, 0), (-5, 5)])
def test_empty_image_is_refused(width: int, height: int) -> None:
    with pytest.raises(ValueError, match="at least 1x1"):
        image_tokens(width, height)


def _fits(width: int, height: int, tier: ImageTier) -> bool:
    max_edge, max_tokens = TIER_LIMITS[tier]
    cols, rows = -(-width // PATCH_PX), -(-height // PATCH_PX)
    return cols * PATCH_PX <= max_edge and rows * PATCH_PX <= max_edge and cols * rows <= max_tokens


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=1, max_value=8000),
    st.integers(min_value=1, max_value=8000),
    st.sampled_from(["standard", "high"]),
)
def test_image_rule_properties(width: int, height: int, tier: ImageTier) -> None:
    cost = image_tokens(width, height, tier)
    rw, rh = cost.resized_width, cost.resized_height
    # Padding: right and bottom only, to the next multiple of 28, one token per patch.
    assert cost.padded_width % PATCH_PX == 0 and 0 <= cost.padded_width - rw < PATCH_PX
    assert cost.padded_height % PATCH_PX == 0 and 0 <= cost.padded_height - rh < PATCH_PX
    assert cost.tokens == (cost.padded_width // PATCH_PX) * (cost.padded_height // PATCH_PX)
    assert _fits(rw, rh, tier)
    if _fits(width, height, tier):
        assert (rw, rh) == (width, height)
        return
    # Downscaled, aspect kept to the rounding pixel, and the largest such size: one more pixel on
    # the long edge would break a limit.
    assert rw <= width and rh <= height
    long_edge, short_edge = max(width, height), min(width, height)
    new_long, new_short = (rw, rh) if width >= height else (rh, rw)
    ratio = long_edge / short_edge
    assert abs(new_short - max(new_long / ratio, 1)) <= 0.5 + 1e-9
    assert not _fits(new_long + 1, max(round((new_long + 1) / ratio), 1), tier)


# --- representation tokens ------------------------------------------------------------------------


def test_representation_tokens_is_full_minus_empty() -> None:
    assert representation_tokens(1500, 1200) == 300
    assert representation_tokens(1200, 1200) == 0


def test_representation_tokens_of_a_real_prompt() -> None:
    template = "You read a web page.\n<page>\n{page}\n</page>\nQuestion: what is the price?"
    page = "# Product\n\nPrice: $12.99\n\n| a | b |\n|---|---|\n| 1 | 2 |"
    added = representation_tokens(count_o200k(template.format(page=page)), count_o200k(template.format(page="")))
    assert added == count_o200k(page)


@pytest.mark.parametrize(("full", "empty"), [(10, 11), (-1, 0), (5, -2)])
def test_representation_tokens_refuses_inconsistent_counts(full: int, empty: int) -> None:
    with pytest.raises(ValueError):
        representation_tokens(full, empty)
