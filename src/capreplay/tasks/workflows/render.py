"""The text the workflow prompts show of site cards and proposals, and one-line reasons for rejections. Pure.

Every stage of a workflow sees the cards in the same words, so a model that read a function as ``F2`` when
proposing reads it as ``F2`` again when the proposal is checked and instantiated. An item is cited everywhere
as ``<site>:<item id>`` (``fellgear.test:A2``), CAP's point id without the function in the middle.
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from capreplay.tasks.generation import ExecutionItem, PerceptionItem, Proposal, SiteCard

Item = ExecutionItem | PerceptionItem


def item_ref(card: SiteCard, item: Item) -> str:
    """How prompts and replies cite an item: ``fellgear.test:A2``."""
    return f"{card.site}:{item.id}"


def functions_text(card: SiteCard) -> str:
    """One line per function of the card: ``- F1 Tent price filtering (core, read): ...``."""
    lines = []
    for function in card.functions:
        tags = f" ({', '.join(function.tags)})" if function.tags else ""
        lines.append(f"- {function.id} {function.name}{tags}: {function.description}")
    return "\n".join(lines) or "- (no functions)"


def item_line(card: SiteCard, item: Item, *, location: bool = False) -> str:
    """One line of an item: its reference, kind and type code, component, function and description.

    With ``location``, the page it is on and its selector chain follow on a second line.
    """
    kind = "action" if isinstance(item, ExecutionItem) else "perception"
    line = f"- {item_ref(card, item)} ({kind} {item.code}, {item.component}, for {item.function}): {item.description}"
    if location:
        chain = " >> ".join(item.location.selector)
        line += f"\n  on {item.location.url} at {chain}"
    return line


def card_text(card: SiteCard, *, location: bool = False) -> str:
    """A card as a prompt shows it: the site and its hosts, its functions, its execution and perception items."""
    items: list[Item] = [*card.execution_items, *card.perception_items]
    listed = "\n".join(item_line(card, item, location=location) for item in items) or "- (no items)"
    return (
        f"## {card.site} (hosts: {', '.join(card.hosts)})\nFunctions:\n{functions_text(card)}\n"
        f"Items (execution and perception):\n{listed}"
    )


def proposal_text(proposal: Proposal) -> str:
    """The proposal as JSON, without its id and checks (the prompt names the id on its own line)."""
    data = proposal.model_dump(mode="json", include={"scenario", "pattern", "steps", "planned_outputs"})
    return json.dumps(data, indent=1, ensure_ascii=False)


def one_line(error: ValidationError, top: str = "") -> str:
    """pydantic's first problem in one line: ``where: message``, and how many more there are.

    ``top`` names the value validated, as the first part of ``where``.
    """
    first = error.errors()[0]
    where = ".".join(str(part) for part in ([top] if top else []) + list(first["loc"]))
    message = " ".join(str(first["msg"]).removeprefix("Value error, ").split())
    others = error.error_count() - 1
    more = f" (and {others} more problem{'s' if others > 1 else ''})" if others else ""
    return f"{where}: {message}{more}" if where else f"{message}{more}"
