"""The prompt of each model-calling stage, one file each in ``prompts/``, with its sha256. Pure reads.

A prompt file holds the system text, a line ``=== user ===``, and the user text, whose ``$name`` slots
(:class:`string.Template`, so the JSON examples' braces need no escaping) each stage fills in. The sha256 of
every prompt file a stage used is written into the stage's output (:class:`capreplay.tasks.generation.Made`),
as a study registers its prompt: changing a prompt changes every generated file's record and every cache key.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from string import Template

from capreplay.llm.messages import ModelRequest

PROMPTS = (
    "card",
    "explore",
    "affinity",
    "propose",
    "proposal_check",
    "instantiate",
    "multihop",
    "multihop_review",
    "answer_from_pages",
)
"""Every prompt the stages use, by file name (``prompts/<name>.md``)."""
USER_MARK = "=== user ==="


@dataclass(frozen=True)
class Prompt:
    """One prompt file: its system text, its user template and the sha256 of its bytes."""

    name: str
    system: str
    user: Template
    sha256: str

    def request(self, *images: bytes, **slots: str) -> ModelRequest:
        """The request with every ``$slot`` filled (a missing one is a KeyError); ``images`` (PNG) follow the text."""
        return ModelRequest.of(self.user.substitute(slots), *images, system=self.system)


@cache
def prompt(name: str) -> Prompt:
    """The prompt ``name`` shipped with the package."""
    if name not in PROMPTS:
        raise KeyError(name)
    data = resources.files("capreplay.tasks").joinpath(f"prompts/{name}.md").read_bytes()
    text = data.decode("utf-8")
    system, mark, user = text.partition(USER_MARK)
    if not mark:
        raise ValueError(f"prompt {name!r} has no {USER_MARK!r} line")
    return Prompt(name, system.strip(), Template(user.strip()), hashlib.sha256(data).hexdigest())


def prompt_hashes(*names: str) -> dict[str, str]:
    """sha256 of each named prompt, for a file's record."""
    return {name: prompt(name).sha256 for name in names}
