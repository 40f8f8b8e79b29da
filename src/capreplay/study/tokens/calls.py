"""``representation_tokens`` of every model call of a run, kept next to its records in ``tokens.jsonl``.

What a representation costs is the full prompt minus the same prompt with an empty page slot
(:func:`capreplay.study.answers.prompt.empty_page_request`), counted three ways:

- ``o200k``: tiktoken o200k_base over the request's texts (system text and every text block), offline,
  always. A screenshot adds no text, so its offline figure is the image's visual tokens by Anthropic's
  documented resize-and-pad rule instead (``method`` says which);
- ``api_count``: the provider's own count (Anthropic ``count_tokens``) of both prompts, when the run can
  ask for it;
- ``api_usage``: the input tokens the call was billed minus the provider's count of the empty prompt, which
  for a screenshot is what the image really cost.

A run appends one :class:`CallTokens` line per call just before the call's run record, so a record always
has its line; a crash between the two leaves a line whose cell is called, and measured, again: the last
line of a cell wins.
"""

from __future__ import annotations

import base64

from capreplay.llm.messages import ImageBlock, ModelRequest, TextBlock
from capreplay.study.answers.resolve import png_size
from capreplay.study.records import CallTokens, Cell
from capreplay.study.tokens.count import ImageTier, count_o200k, image_tokens, representation_tokens

IMAGE_TIER: ImageTier = "standard"
"""The resolution tier of the protocol's model (Claude Sonnet; only Opus 4.7 and later use ``high``)."""


def request_o200k(request: ModelRequest) -> int:
    """o200k_base tokens of a request's texts: the system text and each text block counted apart."""
    texts = [request.system, *(b.text for b in request.content if isinstance(b, TextBlock))]
    return sum(count_o200k(t) for t in texts if t)


def offline_tokens(cell: Cell, full: ModelRequest, empty: ModelRequest) -> CallTokens:
    """The offline figures of one call: o200k difference for text, the image rule for a screenshot."""
    o200k_full, o200k_empty = request_o200k(full), request_o200k(empty)
    images = [b for b in full.content if isinstance(b, ImageBlock)]
    if images:
        added = sum(image_tokens(*png_size(_png(b)), IMAGE_TIER).tokens for b in images)
        return CallTokens(cell=cell, method="image_rule", offline=added, o200k_full=o200k_full,
                          o200k_empty=o200k_empty)  # fmt: skip
    return CallTokens(cell=cell, method="o200k_base", offline=representation_tokens(o200k_full, o200k_empty),
                      o200k_full=o200k_full, o200k_empty=o200k_empty)  # fmt: skip


def _png(block: ImageBlock) -> bytes:
    return base64.b64decode(block.data)


def with_api_counts(tokens: CallTokens, full: int, empty: int, billed_input: int | None) -> CallTokens:
    """``tokens`` with the provider's counts of the full and empty prompts, and the billed difference."""
    usage = billed_input - empty if billed_input is not None else None
    return tokens.model_copy(update={"api_count": representation_tokens(full, empty), "api_empty": empty,
                                     "api_usage": usage})  # fmt: skip
