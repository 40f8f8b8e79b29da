"""What each rendered representation costs in tokens, offline: o200k_base for text, Anthropic's
resize-and-pad rule for images. Pure: the counts are computed from the rendered bytes alone.

These are the representation's own tokens. The study's ``representation_tokens`` (the full prompt minus
the prompt with an empty page slot) adds the few tokens the prompt's wrapping costs.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from capreplay.study.answers.resolve import png_size
from capreplay.study.representations import Representation
from capreplay.study.tokens.count import ImageTokens, count_o200k, image_tokens
from capreplay.util.tables import format_table


class ViewTokens(BaseModel):
    """The token cost of one representation of one page."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    page: str = Field(description="The page id.")
    representation: str
    tokens: int = Field(description="o200k_base tokens of the text, or visual tokens of the image.")
    characters: int | None = Field(description="Length of the text; None for an image.")
    image: ImageTokens | None = Field(description="How the image is sized and counted; None for text.")


def view_tokens(page: str, representation: Representation, rendered: str | bytes) -> ViewTokens:
    """Count one rendered representation."""
    if isinstance(rendered, bytes):
        image = image_tokens(*png_size(rendered))
        return ViewTokens(page=page, representation=representation.name, tokens=image.tokens, characters=None,
                          image=image)
    return ViewTokens(page=page, representation=representation.name, tokens=count_o200k(rendered),
                      characters=len(rendered), image=None)


def token_table(rows: Sequence[ViewTokens]) -> str:
    """Pages down, representations across, tokens in the cells, with a total row."""
    pages = list(dict.fromkeys(r.page for r in rows))
    names = list(dict.fromkeys(r.representation for r in rows))
    cell = {(r.page, r.representation): r.tokens for r in rows}
    table = [["page", *names]]
    table += [[page, *(f"{cell[page, n]:,}" if (page, n) in cell else "-" for n in names)] for page in pages]
    table.append(["total", *(f"{sum(cell.get((p, n), 0) for p in pages):,}" for n in names)])
    return format_table(table)
