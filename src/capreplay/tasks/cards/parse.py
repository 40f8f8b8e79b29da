"""Reading one page's card reply: the functions and items a model wrote, each checked on its own. Pure.

A reply is the JSON object the ``card`` prompt asks for. Every function and item in it is read apart from the
others, so one bad entry costs only itself: an item whose code is not in CAP's taxonomy (or is of the other
kind), that serves a function the reply does not list, or that lacks a field becomes a
:class:`~capreplay.tasks.generation.DroppedItem` with a one-line reason. A reply that is no JSON object, or
whose lists are not lists, drops the whole page (a DroppedItem with no item).

The items read here still have to be borne out by the replay (:mod:`capreplay.tasks.cards.validate`) before
they go on a card.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from capreplay.errors import validation_reason
from capreplay.tasks.generation import CardFunction, DroppedItem
from capreplay.tasks.taxonomy import taxonomy

ItemKind = Literal["execution", "perception"]
LISTS: dict[str, ItemKind] = {"execution_items": "execution", "perception_items": "perception"}
"""The reply's item lists and the kind of item each holds."""
_PREFIX: dict[ItemKind, str] = {"execution": "AT", "perception": "PT"}
_TAG_ORDER = ("core", "standard", "read", "write")


class _ReplyItem(BaseModel):
    """An item as the reply must state it (other keys, such as an id of the model's own, are ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    component: str = Field(min_length=1)
    code: str = Field(min_length=1)
    function: str = Field(min_length=1)
    description: str = Field(min_length=1)
    selector: list[str] = Field(min_length=1)

    @field_validator("component", "code", "function", "description", mode="before")
    @classmethod
    def _stripped(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    @field_validator("selector", mode="before")
    @classmethod
    def _chain(cls, value: Any) -> Any:
        # A one-hop chain is often written as a bare string; the meaning is not in doubt.
        return [value] if isinstance(value, str) else value

    @field_validator("selector")
    @classmethod
    def _hops(cls, value: list[str]) -> list[str]:
        hops = [hop.strip() for hop in value]
        if not all(hops):
            raise ValueError("a selector of the chain is empty")
        return hops


@dataclass(frozen=True)
class DraftItem:
    """An item as one page's reply states it, before the replay checks its selector."""

    kind: ItemKind
    component: str
    code: str
    function: CardFunction
    """The function of the same reply it serves (with the reply's own id)."""
    description: str
    selector: tuple[str, ...]
    raw: dict[str, Any]
    """The item as the model wrote it, kept for the record if the replay drops it."""


@dataclass(frozen=True)
class PageReply:
    """What one page's reply gave: its valid functions and items, and every entry dropped, with why."""

    functions: tuple[CardFunction, ...]
    items: tuple[DraftItem, ...]
    dropped: tuple[DroppedItem, ...]


def _tags(value: Any) -> Any:
    """Tags as CAP writes them (``[Core]``, ``Read``) in the card's lower-case form, in a fixed order."""
    if not isinstance(value, list):
        return value
    tags = {t.strip().strip("[]").strip().lower() if isinstance(t, str) else t for t in value}
    known = [t for t in _TAG_ORDER if t in tags]
    return known + sorted((str(t) for t in tags if t not in _TAG_ORDER), key=str)


def _function(raw: Any) -> CardFunction | str:
    if not isinstance(raw, dict):
        return "function: not a JSON object"
    data = {k: raw[k] for k in ("id", "name", "tags", "description") if k in raw}
    for key in ("id", "name", "description"):
        if isinstance(data.get(key), str):
            data[key] = data[key].strip()
    if "tags" in data:
        data["tags"] = _tags(data["tags"])
    try:
        return CardFunction.model_validate(data)
    except ValidationError as e:
        return f"function {validation_reason(e)}"


def _item(raw: Any, kind: ItemKind, functions: Mapping[str, CardFunction]) -> DraftItem | str:
    if not isinstance(raw, dict):
        return f"{kind} item: not a JSON object"
    try:
        item = _ReplyItem.model_validate(raw)
    except ValidationError as e:
        return f"{kind} item {validation_reason(e)}"
    known = taxonomy().get(item.code)
    if known is None:
        return f"code {item.code!r} is not a type of CAP's taxonomy"
    if not item.code.startswith(_PREFIX[kind]):
        return f"code {item.code!r} is a {known.kind} type, listed among the {kind} items"
    function = functions.get(item.function)
    if function is None:
        return f"it serves function {item.function!r}, which the reply does not list"
    return DraftItem(kind, item.component, item.code, function, item.description, tuple(item.selector), raw)


def _as_item(raw: Any) -> dict[str, Any]:
    return raw if isinstance(raw, dict) else {"value": raw}


def parse_reply(data: dict[str, Any] | str, *, site: str, page: str) -> PageReply:
    """The functions and items of one page's reply (``data``: its JSON object, or why it has none).

    ``site`` and ``page`` name where every dropped entry came from.
    """

    def dropped(raw: Any, reason: str) -> DroppedItem:
        return DroppedItem(site=site, page=page, item=None if raw is None else _as_item(raw), reason=reason)

    if isinstance(data, str):
        return PageReply((), (), (dropped(None, f"the reply is unusable: {data}"),))
    functions_raw = data.get("functions")
    if not isinstance(functions_raw, list):
        return PageReply((), (), (dropped(None, "the reply has no list 'functions'"),))
    lists: dict[str, list[Any]] = {}
    for key in LISTS:
        value = data.get(key, [])
        if not isinstance(value, list):
            return PageReply((), (), (dropped(None, f"the reply's {key!r} is not a list"),))
        lists[key] = value

    drops: list[DroppedItem] = []
    functions: dict[str, CardFunction] = {}
    for raw in functions_raw:
        function = _function(raw)
        if isinstance(function, str):
            drops.append(dropped(raw, function))
        elif function.id in functions:
            drops.append(dropped(raw, f"function id {function.id!r} is used twice in the reply"))
        else:
            functions[function.id] = function
    items: list[DraftItem] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for key, kind in LISTS.items():
        for raw in lists[key]:
            item = _item(raw, kind, functions)
            if isinstance(item, str):
                drops.append(dropped(raw, item))
            elif (item.code, item.selector) in seen:
                drops.append(dropped(raw, f"it repeats an earlier {item.code} item on the same element"))
            else:
                seen.add((item.code, item.selector))
                items.append(item)
    return PageReply(tuple(functions.values()), tuple(items), tuple(drops))
