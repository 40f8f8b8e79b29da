"""Offline token accounting for the study: o200k_base text tokens and Anthropic image tokens.

Text is counted with tiktoken's ``o200k_base`` encoding, built from the rank file that ships in
``capreplay/study/tokens/data/`` and is checked by sha256 before use, so counting never needs the network
(``tiktoken.get_encoding("o200k_base")`` would download the same file). Images are counted with the
resize-and-pad rule Anthropic documents for Claude, which needs no API call either.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Literal

import tiktoken
from pydantic import BaseModel, ConfigDict, Field
from tiktoken.load import load_tiktoken_bpe

from capreplay.errors import CapreplayError, os_reason

O200K_BASE_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""sha256 of the o200k_base rank file, as pinned in tiktoken's own ``tiktoken_ext/openai_public.py``."""

O200K_BASE_RANK_FILE = Path(__file__).resolve().parent / "data" / "o200k_base.tiktoken"
"""The rank file shipped in the package (byte-identical to the one tiktoken downloads)."""

# Copied from tiktoken 0.14.0's tiktoken_ext/openai_public.py, o200k_base(); an encoding is only
# o200k_base when its split pattern and special tokens are exactly these.
_O200K_PAT_STR = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_O200K_SPECIAL_TOKENS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}


def load_o200k(path: Path = O200K_BASE_RANK_FILE) -> tiktoken.Encoding:
    """Build the o200k_base encoding from a rank file on disk, never from the network.

    Raises :class:`CapreplayError` naming the file when it is missing, unreadable or not the
    o200k_base rank file (its sha256 differs). Use :func:`o200k_encoding` for the cached instance.
    """
    try:
        data = path.read_bytes()
    except OSError as e:
        reason = os_reason(e)
        raise CapreplayError(f"cannot read the o200k_base rank file ({reason}); reinstall capreplay", path) from e
    # Checked here and not only by tiktoken: tiktoken keeps a copy in its cache directory, keyed by
    # the path, and serves that copy without reading the file again, so a damaged file could pass.
    actual = hashlib.sha256(data).hexdigest()
    if actual != O200K_BASE_SHA256:
        raise CapreplayError(
            f"not the o200k_base rank file: sha256 is {actual}, expected {O200K_BASE_SHA256}; reinstall capreplay",
            path,
        )
    try:
        ranks = load_tiktoken_bpe(str(path), expected_hash=O200K_BASE_SHA256)
    except (OSError, ValueError) as e:
        # OSError: tiktoken could not write its cache copy into a TIKTOKEN_CACHE_DIR the user set.
        raise CapreplayError(f"tiktoken could not load the o200k_base rank file: {e}", path) from e
    return tiktoken.Encoding(
        name="o200k_base",
        pat_str=_O200K_PAT_STR,
        mergeable_ranks=ranks,
        special_tokens=_O200K_SPECIAL_TOKENS,
    )


@functools.cache
def o200k_encoding() -> tiktoken.Encoding:
    """The o200k_base encoding from the shipped rank file, loaded once per process."""
    return load_o200k()


def count_o200k(text: str) -> int:
    """Number of o200k_base tokens in ``text``.

    Special-token strings such as ``<|endoftext|>`` are counted as the plain text they are, since
    page content may contain them literally and a model reads them as text too.
    """
    return len(o200k_encoding().encode_ordinary(text))


def representation_tokens(full: int, empty: int) -> int:
    """Tokens the page representation adds: the full prompt's count minus the empty-slot prompt's.

    Both counts must come from the same counter, model, system prompt and thinking setting. A
    negative difference means they did not, and raises ``ValueError`` instead of being recorded.
    """
    if full < 0 or empty < 0:
        raise ValueError(f"token counts cannot be negative (full={full}, empty={empty})")
    if full < empty:
        raise ValueError(
            f"the full prompt counts fewer tokens ({full}) than the prompt with an empty page slot ({empty})"
        )
    return full - empty


ImageTier = Literal["standard", "high"]
"""Anthropic's image resolution tiers: ``high`` for Claude Opus 4.7 and later, ``standard`` otherwise."""

PATCH_PX = 28
"""Side of one visual token: Claude sees an image as 28x28 pixel patches."""

TIER_LIMITS: dict[ImageTier, tuple[int, int]] = {"standard": (1568, 1568), "high": (2576, 4784)}
"""Per tier: (longest allowed edge in pixels, visual-token budget)."""


class ImageTokens(BaseModel):
    """What an image costs Claude, and the sizes Claude resizes and pads it to."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    width: int = Field(ge=1, description="Width of the image as sent, in pixels.")
    height: int = Field(ge=1, description="Height of the image as sent, in pixels.")
    tier: ImageTier = Field(description="The resolution tier the limits were taken from.")
    resized_width: int = Field(ge=1, description="Width after Claude's aspect-preserving downscale (no padding).")
    resized_height: int = Field(ge=1, description="Height after Claude's aspect-preserving downscale (no padding).")
    padded_width: int = Field(ge=PATCH_PX, description="Resized width padded on the right to a multiple of 28.")
    padded_height: int = Field(ge=PATCH_PX, description="Resized height padded at the bottom to a multiple of 28.")
    tokens: int = Field(ge=1, description="Visual tokens: (padded_width / 28) * (padded_height / 28).")

    @property
    def resized(self) -> bool:
        """Whether Claude scales the image down (coordinates it returns are then in the resized space)."""
        return (self.resized_width, self.resized_height) != (self.width, self.height)


def _patches(pixels: int) -> int:
    """Number of 28-pixel patches needed to cover ``pixels``."""
    return -(-pixels // PATCH_PX)


def _fits(width: int, height: int, max_edge: int, max_tokens: int) -> bool:
    """Whether an image of this size is within both limits of a tier, measured after padding."""
    cols, rows = _patches(width), _patches(height)
    return cols * PATCH_PX <= max_edge and rows * PATCH_PX <= max_edge and cols * rows <= max_tokens


def resized_size(width: int, height: int, max_edge: int, max_tokens: int) -> tuple[int, int]:
    """The (width, height) Claude scales an image to before padding; unchanged when it already fits.

    The largest aspect-preserving size within both limits, found by bisection on the long edge with
    the short edge rounded as Anthropic's reference implementation rounds it (Python's ``round``),
    so the result matches the provider's to the pixel.
    """
    if _fits(width, height, max_edge, max_tokens):
        return width, height
    long_edge, short_edge = max(width, height), min(width, height)
    ratio = long_edge / short_edge

    def short_for(long_px: int) -> int:
        return max(round(long_px / ratio), 1)

    fits_long, too_long = 1, long_edge  # a 1-pixel long edge always fits; the original never does
    while fits_long + 1 < too_long:
        mid = (fits_long + too_long) // 2
        if _fits(mid, short_for(mid), max_edge, max_tokens):
            fits_long = mid
        else:
            too_long = mid
    if width >= height:
        return fits_long, short_for(fits_long)
    return short_for(fits_long), fits_long


def image_tokens(width: int, height: int, tier: ImageTier = "standard") -> ImageTokens:
    """Visual tokens Claude bills for a ``width`` x ``height`` image, following Anthropic's documented rule.

    The rule (Anthropic, "Vision", https://platform.claude.com/docs/en/build-with-claude/vision, and
    "How Claude resizes and pads images" in
    https://platform.claude.com/docs/en/build-with-claude/vision-coordinates):

    1. Claude sees 28x28 pixel patches; each patch is one visual token, so a W x H image costs
       ceil(W/28) * ceil(H/28) tokens.
    2. An image beyond the tier's limits is first scaled down to the largest aspect-preserving size
       whose padded edges stay within the edge limit and whose cost stays within the token budget:
       1568 px and 1568 tokens on the standard tier, 2576 px and 4784 tokens on the high tier.
    3. Every image, resized or not, is then padded on the right and bottom to a multiple of 28.

    The earlier study's screenshot, 1280x800, is not resized on either tier and is padded to
    1288x812: 46 x 29 = 1,334 visual tokens. The older "width * height / 750" estimate from the same
    docs is an approximation of this rule and gives about 1,365 for 1280x800, so it is not used.
    """
    if width < 1 or height < 1:
        raise ValueError(f"an image must be at least 1x1 pixels, not {width}x{height}")
    max_edge, max_tokens = TIER_LIMITS[tier]
    resized_width, resized_height = resized_size(width, height, max_edge, max_tokens)
    cols, rows = _patches(resized_width), _patches(resized_height)
    return ImageTokens(
        width=width,
        height=height,
        tier=tier,
        resized_width=resized_width,
        resized_height=resized_height,
        padded_width=cols * PATCH_PX,
        padded_height=rows * PATCH_PX,
        tokens=cols * rows,
    )
