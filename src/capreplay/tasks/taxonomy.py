"""CAP's taxonomy of complex actions (AT01-AT64) and perception (PT01-PT56), shipped as data. Pure reads.

The codes, categories, components and type names are those of the CAP paper's appendix C, in
``data/cap_taxonomy.json``; prompts show them, cards and covered points are checked against them, and
coverage is counted over them.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Kind = Literal["action", "perception"]


class TaxonomyType(BaseModel):
    """One action or perception type."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    code: str = Field(pattern=r"^(AT|PT)[0-9]{2}$")
    category: str
    component: str
    name: str

    @property
    def kind(self) -> Kind:
        """action for AT codes, perception for PT codes."""
        return "action" if self.code.startswith("AT") else "perception"

    def line(self) -> str:
        """``AT21 Slider: Range Selection (Data Entry)``: how prompts list it."""
        return f"{self.code} {self.component}: {self.name} ({self.category})"


class Taxonomy(BaseModel):
    """Every type, by kind."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    action_types: list[TaxonomyType] = Field(min_length=64, max_length=64)
    perception_types: list[TaxonomyType] = Field(min_length=56, max_length=56)

    def of(self, kind: Kind) -> list[TaxonomyType]:
        """The types of one kind, in code order."""
        return self.action_types if kind == "action" else self.perception_types

    def get(self, code: str) -> TaxonomyType | None:
        """The type with ``code``, or None."""
        return next((t for t in [*self.action_types, *self.perception_types] if t.code == code), None)


@cache
def taxonomy() -> Taxonomy:
    """The taxonomy shipped with the package."""
    text = resources.files("capreplay.tasks").joinpath("data/cap_taxonomy.json").read_text(encoding="utf-8")
    return Taxonomy.model_validate(json.loads(text))


def taxonomy_text(kind: Kind) -> str:
    """One line per type of ``kind``, for a prompt."""
    return "\n".join(t.line() for t in taxonomy().of(kind))
