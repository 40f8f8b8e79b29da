"""Reading an instantiated proposal: the model's reply as a workflow task, checked before a rubric is asked for. Pure.

The reply gives the description, the outputs and their expected values, the cited card items, the gold path
and the start URL. Covered points are built here from the cited items (never taken from the model's words):
an item's type code and description, on the host of the item's page. Everything a task needs is checked
before the rubric is written, so a broken instance costs no rubric call: the task is validated with a
stand-in rubric (:func:`stand_in`) that verifies every covered point, and the real one replaces it
(:func:`with_rubric`). The gold path may only visit hosts of the proposal's sites.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pydantic import TypeAdapter, ValidationError

from capreplay.judge.fields import format_number
from capreplay.models.rubric import Regex, RubricNode
from capreplay.models.workflow import LIST_TYPES, CoveredPoint, ExpectedOutput, GoldStep, Goto, WorkflowTask
from capreplay.tasks.generation import CardsFile, ExecutionItem, Proposal, slug
from capreplay.tasks.workflows.render import one_line

_OUTPUTS: TypeAdapter[list[ExpectedOutput]] = TypeAdapter(list[ExpectedOutput])
_GOLD_PATH: TypeAdapter[list[GoldStep]] = TypeAdapter(list[GoldStep])
_START: TypeAdapter[Goto] = TypeAdapter(Goto)
STAND_IN = "stand-in"
"""The id prefix of the stand-in rubric's nodes."""


def _read[T](adapter: TypeAdapter[T], value: object, top: str) -> T | str:
    """``value`` validated, or pydantic's first problem in one line under the name ``top``."""
    try:
        return adapter.validate_python(value)
    except ValidationError as e:
        return one_line(e, top)


def covered_points(refs: object, cards: CardsFile) -> list[CoveredPoint] | str:
    """The covered points of the cited items (``site:A2``, or CAP's ``site:F1:A2``), or why one is not in the cards."""
    if not isinstance(refs, list) or not refs or not all(isinstance(ref, str) for ref in refs):
        return "covered_items is not a non-empty list of item ids like 'site.test:A1'"
    points = []
    for ref in dict.fromkeys(refs):
        site, _, rest = ref.strip().partition(":")
        item_id = rest.rsplit(":", 1)[-1]
        try:
            card = cards.card(site)
            item = card.item(item_id)
        except KeyError:
            return f"covered item {ref!r} is not in the cards"
        points.append(
            CoveredPoint(
                id=slug(f"{card.site} {item.id}", limit=64),
                type="action" if isinstance(item, ExecutionItem) else "perception",
                code=item.code,
                site=urlsplit(item.location.url).hostname or card.hosts[0],
                description=item.description,
            )
        )
    return points


def _text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return format_number(float(value))
    return None


def expected_values(raw: object, outputs: list[ExpectedOutput]) -> dict[str, str | list[str]] | str:
    """The expected values as text (numbers too), each of the shape its output has, or why they are unusable.

    Every user value and condition check needs one; a provenance URL may go without.
    """
    if not isinstance(raw, dict):
        return "expected is not an object of output names and values"
    values: dict[str, str | list[str]] = {}
    by_name = {o.name: o for o in outputs}
    for name, value in raw.items():
        items = [_text(v) for v in value] if isinstance(value, list) else None
        single = _text(value)
        if items is not None and all(i is not None for i in items):
            values[name] = [i for i in items if i is not None]
        elif single is not None:
            values[name] = single
        else:
            return f"the expected value of {name!r} is not text, a number or a list of them"
        output = by_name.get(name)
        is_list = isinstance(values[name], list)
        if output is not None and is_list != (output.type in LIST_TYPES):
            shape = "a list" if is_list else "a single value"
            return f"the expected value of {name!r} is {shape}, but the output is {output.type}"
    missing = [o.name for o in outputs if o.role != "provenance_url" and o.name not in values]
    if missing:
        return f"no expected value for output {missing[0]!r}"
    return values


def visited_hosts(start_url: str, gold_path: list[GoldStep]) -> list[str]:
    """The hosts of the start URL and of each ``goto``, in visiting order, each once."""
    urls = [start_url, *(step.url for step in gold_path if isinstance(step, Goto))]
    return list(dict.fromkeys((urlsplit(url).hostname or "").lower() for url in urls))


def stand_in(points: list[CoveredPoint], outputs: list[ExpectedOutput]) -> RubricNode:
    """A rubric that verifies every covered point and reads one output: enough to validate the rest of a task."""
    check = Regex(check="regex", field=outputs[0].name if outputs else "none", pattern=".*")
    leaves = [RubricNode(id=f"{STAND_IN}-{i}", description="stand-in", kind=p.type, point=p.id, check=check)
              for i, p in enumerate(points)] or [RubricNode(id=STAND_IN, description="stand-in", kind="other",
                                                            check=check)]  # fmt: skip
    return RubricNode(id=f"{STAND_IN}-root", description="stand-in", children=leaves)


def parse_instance(reply: dict[str, Any] | str, proposal: Proposal, cards: CardsFile) -> WorkflowTask | str:
    """The task of ``proposal`` in the model's reply, with a stand-in rubric, or why it is unusable (one line).

    The task's id is the proposal's, its flow the proposal's pattern, its sites the hosts in visiting order.
    """
    if isinstance(reply, str):
        return reply
    outputs = _read(_OUTPUTS, reply.get("outputs"), "outputs")
    if isinstance(outputs, str):
        return outputs
    gold_path = _read(_GOLD_PATH, reply.get("gold_path"), "gold_path")
    if isinstance(gold_path, str):
        return gold_path
    start = _read(_START, {"type": "goto", "url": reply.get("start_url")}, "start_url")
    if isinstance(start, str):
        return start
    points = covered_points(reply.get("covered_items"), cards)
    if isinstance(points, str):
        return points
    expected = expected_values(reply.get("expected"), outputs)
    if isinstance(expected, str):
        return expected
    hosts = {host for site in proposal.sites for host in cards.card(site).hosts}
    visited = visited_hosts(start.url, gold_path)
    strange = next((host for host in visited if host not in hosts), None)
    if strange is not None:
        return f"the task goes to {strange!r}, which is not a host of the proposal's sites ({', '.join(sorted(hosts))})"
    try:
        return WorkflowTask.model_validate(
            {
                "id": proposal.id,
                "description": reply.get("description"),
                "sites": visited,
                "flow": proposal.pattern,
                "start_url": start.url,
                "covered_points": points,
                "outputs": outputs,
                "rubric": stand_in(points, outputs),
                "gold_path": gold_path,
                "expected": expected,
            }
        )
    except ValidationError as e:
        return one_line(e)


def with_rubric(draft: WorkflowTask, rubric: RubricNode) -> WorkflowTask:
    """``draft`` with its real rubric, validated again; a ValidationError if the two do not fit."""
    return WorkflowTask.model_validate(
        {name: getattr(draft, name) for name in WorkflowTask.model_fields} | {"rubric": rubric}
    )
