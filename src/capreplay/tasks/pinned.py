"""The leaves that pin a generated task's answer to the values its generator read from the pages. Pure.

A rubric a model writes (``judge make-rubric``) never sees the pages, so it may only ground values on cited
pages; it cannot tell the right hotel from any hotel the cited page lists. A generated task knows its
expected values, and the proof has found each of them on the pages its gold path reached, so they are
pinned here: each user value and condition value becomes a critical leaf (a number equal to the expected
one, a text one of the expected, a list holding every expected item), grouped under a critical node beside
the model's tree. Provenance URLs are not pinned: another URL of the snapshot that shows the same value is
as good a citation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from capreplay.judge.fields import parse_number
from capreplay.models.rubric import NumericRange, RubricNode, SetMembership
from capreplay.models.workflow import ExpectedOutput

EXPECTED_NODE = "expected-values"


def expected_leaf(output: ExpectedOutput, value: str | list[str]) -> RubricNode | None:
    """The critical leaf that pins ``output`` to ``value``; None for a provenance URL or an unreadable number."""
    if output.role == "provenance_url" or output.type in ("url", "url_list"):
        return None
    check: NumericRange | SetMembership
    if output.type == "number":
        number = parse_number(value)
        if number is None:
            return None
        check = NumericRange(check="numeric_range", field=output.name, min=number, max=number)
    elif output.type == "text_list":
        items = value if isinstance(value, list) else [value]
        check = SetMembership(check="set_membership", field=output.name, values=list(items), mode="contains_all")
    else:
        text = value if isinstance(value, str) else "; ".join(value)
        check = SetMembership(check="set_membership", field=output.name, values=[text], mode="one_of")
    return RubricNode(
        id=f"expected-{output.name.replace('_', '-')}",
        description=f"{output.name} is the value the pages show: {output.description}",
        critical=True,
        kind="other",
        check=check,
    )


def with_expected(
    task_id: str, description: str, rubric: RubricNode, outputs: Sequence[ExpectedOutput],
    expected: Mapping[str, str | list[str]],
) -> RubricNode:  # fmt: skip
    """``rubric`` beside a critical node of expected-value leaves, under a new root; ``rubric`` if none applies."""
    leaves = [leaf for o in outputs if o.name in expected and (leaf := expected_leaf(o, expected[o.name]))]
    if not leaves:
        return rubric
    pinned = RubricNode(id=EXPECTED_NODE, description="The answer's values are those on the frozen pages",
                        critical=True, children=leaves)  # fmt: skip
    return RubricNode(id=f"{task_id}-root", description=description[:200], children=[rubric, pinned])
