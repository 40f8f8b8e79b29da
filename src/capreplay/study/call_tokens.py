"""``representation_tokens`` of every model call of a run, kept next to its records in ``tokens.jsonl``.

What a representation costs is the full prompt minus the same prompt with an empty page slot
(:func:`capreplay.study.prompt.empty_page_request`), counted three ways:

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
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from capreplay.errors import CapreplayError, InputError
from capreplay.llm.models import ImageBlock, ModelRequest, TextBlock
from capreplay.study.resolve import png_size
from capreplay.study.runs import Cell
from capreplay.study.tokens import ImageTier, count_o200k, image_tokens, representation_tokens

TOKENS_FILE = "tokens.jsonl"
"""The file in a run folder that holds one :class:`CallTokens` per call."""

IMAGE_TIER: ImageTier = "standard"
"""The resolution tier of the protocol's model (Claude Sonnet; only Opus 4.7 and later use ``high``)."""


class CallTokens(BaseModel):
    """What the page representation added to one call's prompt."""

    model_config = ConfigDict(extra="forbid")

    cell: Cell
    method: Literal["o200k_base", "image_rule"] = Field(
        description="How ``offline`` was counted: o200k_base text tokens, or Anthropic's image rule."
    )
    offline: int = Field(ge=0, description="Tokens the representation added, counted offline.")
    o200k_full: int = Field(ge=0, description="o200k_base tokens of the full prompt's texts.")
    o200k_empty: int = Field(ge=0, description="o200k_base tokens of the empty-slot prompt's texts.")
    api_count: int | None = Field(
        default=None, description="The provider's count of the full prompt minus that of the empty-slot prompt."
    )
    api_empty: int | None = Field(default=None, description="The provider's count of the empty-slot prompt.")
    api_usage: int | None = Field(
        default=None, description="Input tokens billed for the call minus the provider's count of the empty prompt."
    )
    api_error: str | None = Field(default=None, description="Why the provider's count is missing, if it failed.")


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


class TokensLog:
    """``tokens.jsonl`` opened for appending; each line flushed and fsynced before :meth:`append` returns."""

    def __init__(self, run_dir: Path) -> None:
        """Open (creating) the file; a last line cut short by a crash is cut off first."""
        self.path = run_dir / TOKENS_FILE
        try:
            data = self.path.read_bytes() if self.path.exists() else b""
            self._file = open(self.path, "ab")  # noqa: SIM115 - held open for the life of the log
            end = data.rfind(b"\n") + 1
            if end < len(data):
                self._file.truncate(end)
        except OSError as e:
            raise CapreplayError(f"cannot open for appending: {e.strerror or e}", self.path) from e

    def append(self, tokens: CallTokens) -> None:
        """Write one line and make it durable."""
        try:
            self._file.write(tokens.model_dump_json().encode("utf-8") + b"\n")
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as e:
            raise CapreplayError(f"cannot write token counts: {e.strerror or e}", self.path) from e

    def close(self) -> None:
        """Close the file."""
        self._file.close()


def read_tokens(run_dir: Path) -> dict[Cell, CallTokens]:
    """The token counts of a run by cell (the last line of a cell wins); an unfinished last line is ignored."""
    path = run_dir / TOKENS_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", path) from e
    found: dict[Cell, CallTokens] = {}
    for number, line in enumerate(data[: data.rfind(b"\n") + 1].split(b"\n")[:-1], start=1):
        try:
            tokens = CallTokens.model_validate_json(line)
        except ValidationError as e:
            raise InputError(f"line {number} is not a token count: {e.errors()[0]['msg']}", path) from e
        found[tokens.cell] = tokens
    return found
