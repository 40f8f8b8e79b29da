"""What the self-test expects of each (ACT task, representation) pair, from the task's measured record alone.

Pure functions of the record (:class:`capreplay.models.task.TargetRecord`, written when the task was
measured), the task's chain and the page's views: never of the scorer's resolution or its verdict. For each
answer format, the answer a perfect model would give from what the representation shows, whether the target
is representable there, and whether that answer must score correct:

- ``css_selector``: the task's own selector, representable in the top document's light DOM only;
- ``text``: the first of the target's names the Markdown shows with which the format's first matching
  strategy finds the target (with its ``occurrence`` when the name matches several);
- ``role_name``: the target's own node, representable when the accessibility tree shows that line;
- ``aria_ref``: the ref the record found in the AI-mode snapshot;
- ``index``: the lowest index whose element has the target's XPath at the target's iframe depth;
- ``point``: the centre of the target's box inside the viewport, as the screenshot shows it;
- ``stagehand_id``: the id of Stagehand's tree whose XPath is the target's, in Stagehand's form.

Where the representation does not carry the target, the answer is the best guess a model could make (the
text a person sees on it, Chromium's role and name, the chain's last selector); whether a guess scores is
not expected either way, only that the verdict calls the target not representable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from capreplay.models.task import ActTask, NameMatch, TargetRecord
from capreplay.study.page.views import PageViews
from capreplay.study.representations.accessibility_tree import node_lines
from capreplay.study.representations.base import Representation
from capreplay.util.answer_text import normalize_answer


@dataclass(frozen=True)
class ExpectedAct:
    """The perfect answer of one pair and what it must score."""

    answer: dict[str, Any]
    correct: bool | None
    """None for a guess at a target the representation does not carry: a guess may hit (a button's text that
    the Markdown drops is still its text), so only the representability is checked."""
    representable: bool
    without_occurrence: dict[str, Any] | None = None
    """The answer with its ``occurrence`` left out, where the name matches several elements: it must not score."""


def _named(answer: dict[str, Any], match: NameMatch) -> ExpectedAct:
    """An answer naming the target by a name it shares with ``match.matches - 1`` other elements."""
    if match.matches > 1 and match.occurrence is not None:
        return ExpectedAct({**answer, "occurrence": match.occurrence}, True, True, without_occurrence=answer)
    return ExpectedAct(answer, match.occurrence is not None, True)


def _text(record: TargetRecord, shown: str) -> ExpectedAct:
    visible = [n for n in record.names if normalize_answer(n.name) and normalize_answer(n.name) in shown]
    if not record.in_top_document or not visible:
        # Nothing the Markdown shows names it: all a model could go on is the text a person sees on it (none on
        # an icon-only control), which must not score.
        return ExpectedAct({"text": record.visible_text}, None, False)
    usable = [n for n in visible if n.occurrence is not None]
    return _named({"text": (usable or visible)[0].name}, (usable or visible)[0])


def _role(record: TargetRecord, tree: str) -> ExpectedAct:
    role = record.role
    if role is None:  # no node of its own: the best guess is the role and name Chromium computes for it
        return ExpectedAct({"role": record.accessible_role or "generic", "name": record.accessible_name}, None, False)
    answer = {"role": role.role, "name": role.name}
    if not record.in_top_document or role.line not in node_lines(tree):
        return ExpectedAct(answer, None, False)
    return _named(answer, role)


def _index(record: TargetRecord, views: PageViews) -> ExpectedAct:
    selector_map = views.indexed_dom.selector_map
    found = [i for i, e in selector_map.items() if (e.xpath, e.frame_depth) == (record.xpath, record.frame_depth)]
    if not found:  # a perfect model cannot name it: an index that names nothing
        return ExpectedAct({"index": max(selector_map, default=0) + 1}, False, False)
    return ExpectedAct({"index": min(found)}, True, True)


def _stagehand(record: TargetRecord, views: PageViews) -> ExpectedAct:
    snapshot = views.stagehand
    if snapshot is None:
        raise ValueError("this page session did not read Stagehand's snapshot")
    found = sorted(i for i, xpath in snapshot.xpath_map.items()
                   if xpath == record.stagehand_xpath and f"[{i}]" in snapshot.formatted_tree)  # fmt: skip
    if not found:  # a perfect model cannot name it: an id that names nothing
        return ExpectedAct({"id": "0-0"}, False, False)
    return ExpectedAct({"id": found[0]}, True, True)


def expected_act(task: ActTask, record: TargetRecord, representation: Representation, views: PageViews) -> ExpectedAct:
    """The perfect answer to ``task`` from ``representation``, and whether it must score correct."""
    match representation.answer_format:
        case "css_selector":
            top = not record.boundaries
            return ExpectedAct({"selector": task.target[0] if top else task.target[-1]}, True if top else None, top)
        case "text":
            return _text(record, normalize_answer(representation.searchable(views)))
        case "role_name":
            return _role(record, representation.searchable(views))
        case "aria_ref":
            if record.aria_ref is None:
                return ExpectedAct({"ref": "e1"}, None, False)
            return ExpectedAct({"ref": record.aria_ref}, True, True)
        case "index":
            return _index(record, views)
        case "stagehand_id":
            return _stagehand(record, views)
        case "point":
            if record.click is None:
                return ExpectedAct({"x": -1, "y": -1}, False, False)
            return ExpectedAct({"x": record.click[0], "y": record.click[1]}, True, True)
    raise AssertionError(f"unhandled answer format {representation.answer_format!r}")
