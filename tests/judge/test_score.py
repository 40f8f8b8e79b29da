"""Rubric tree scoring (CAP 4.4) on hand-worked trees: gating, averaging, nesting, success."""

from __future__ import annotations

import pytest

from capreplay.judge.tree_score import score_tree, success
from capreplay.models.rubric import RubricNode


def leaf(node_id: str, *, critical: bool = False, kind: str = "other") -> dict[str, object]:
    return {"id": node_id, "description": node_id, "critical": critical, "kind": kind,
            "check": {"check": "regex", "field": "answer", "pattern": "."}}  # fmt: skip


def inner(node_id: str, *children: dict[str, object], critical: bool = False) -> dict[str, object]:
    return {"id": node_id, "description": node_id, "critical": critical, "children": list(children)}


def tree(data: dict[str, object]) -> RubricNode:
    return RubricNode.model_validate(data)


# The shape of CAP's appendix example: five non-critical steps under the root, mostly critical leaves.
APPENDIX = tree(
    inner(
        "root",
        inner("s1", leaf("s1.slider", critical=True, kind="action"), leaf("s1.genre", critical=True, kind="action"),
              leaf("s1.titles", critical=True, kind="perception")),
        inner("s2", leaf("s2.tab", critical=True, kind="action"), leaf("s2.keywords", kind="perception")),
        inner("s3", leaf("s3.rating", critical=True), leaf("s3.topics", kind="perception")),
        inner("s4", leaf("s4.sort", critical=True, kind="action"), leaf("s4.citations", critical=True)),
        inner("s5", leaf("s5.views", critical=True), leaf("s5.duration", critical=True)),
    )
)  # fmt: skip
APPENDIX_LEAVES = [node.id for node in APPENDIX.leaves()]


def passing(rubric: RubricNode, *failed: str) -> dict[str, bool]:
    return {node.id: node.id not in failed for node in rubric.leaves()}


def test_appendix_all_pass_is_success() -> None:
    scores = score_tree(APPENDIX, passing(APPENDIX))
    assert scores == {node.id: 1.0 for node in APPENDIX.walk()}
    assert success(scores)


def test_failed_critical_leaf_zeroes_its_step_but_not_the_other_steps() -> None:
    scores = score_tree(APPENDIX, passing(APPENDIX, "s1.slider"))
    assert scores["s1.slider"] == 0.0
    assert scores["s1.genre"] == 1.0
    assert scores["s1"] == 0.0
    assert [scores[s] for s in ("s2", "s3", "s4", "s5")] == [1.0, 1.0, 1.0, 1.0]
    # The steps are non-critical, so the root averages them: 4 of 5.
    assert scores["root"] == pytest.approx(0.8)
    assert not success(scores)


def test_failed_non_critical_leaf_is_averaged_not_gated() -> None:
    scores = score_tree(APPENDIX, passing(APPENDIX, "s2.keywords"))
    # s2's critical tab passed; its only non-critical child scored 0, so s2 is their mean: 0.
    assert scores["s2"] == 0.0
    assert scores["root"] == pytest.approx(0.8)


def test_two_failed_steps() -> None:
    scores = score_tree(APPENDIX, passing(APPENDIX, "s3.rating", "s5.duration", "s2.tab"))
    assert (scores["s2"], scores["s3"], scores["s5"]) == (0.0, 0.0, 0.0)
    assert scores["root"] == pytest.approx(0.4)


def test_averaging_over_non_critical_children_once_critical_ones_pass() -> None:
    rubric = tree(inner("root", leaf("gate", critical=True), leaf("a"), leaf("b"), leaf("c")))
    assert score_tree(rubric, passing(rubric, "b"))["root"] == pytest.approx(2 / 3)
    assert score_tree(rubric, passing(rubric, "a", "b", "c"))["root"] == 0.0
    # The gate failing zeroes the root whatever the others do.
    assert score_tree(rubric, passing(rubric, "gate"))["root"] == 0.0


def test_node_with_only_critical_children_scores_one_or_zero() -> None:
    rubric = tree(inner("root", leaf("a", critical=True), leaf("b", critical=True)))
    assert score_tree(rubric, passing(rubric))["root"] == 1.0
    assert score_tree(rubric, passing(rubric, "b"))["root"] == 0.0


def test_nested_three_levels() -> None:
    #  root
    #  ├─ A (non-critical)
    #  │  ├─ A1 (critical): x (critical), y, z     -> y fails: A1 = 1/2
    #  │  └─ A2 (non-critical): u, v               -> u fails: A2 = 1/2
    #  ├─ B (non-critical)
    #  │  └─ B1 (critical): w (critical)           -> passes: B1 = 1, B = 1 (no non-critical child)
    #  └─ C (critical): k                          -> passes: C = 1
    rubric = tree(
        inner(
            "root",
            inner("A", inner("A1", leaf("x", critical=True), leaf("y"), leaf("z"), critical=True),
                  inner("A2", leaf("u"), leaf("v"))),
            inner("B", inner("B1", leaf("w", critical=True), critical=True)),
            inner("C", leaf("k"), critical=True),
        )
    )  # fmt: skip
    scores = score_tree(rubric, passing(rubric, "y", "u"))
    # A1 is critical and scored 0.5 < 1, so A is gated to 0 despite A2's 0.5.
    assert scores["A1"] == pytest.approx(0.5)
    assert scores["A2"] == pytest.approx(0.5)
    assert scores["A"] == 0.0
    assert scores["B1"] == 1.0
    assert scores["B"] == 1.0
    assert scores["C"] == 1.0
    # C (critical) passed; root averages A and B.
    assert scores["root"] == pytest.approx(0.5)

    scores = score_tree(rubric, passing(rubric, "u"))
    assert scores["A"] == pytest.approx(0.5)
    assert scores["root"] == pytest.approx(0.75)

    # A failed critical grandchild zeroes its parent and, through it being critical, the grandparent.
    scores = score_tree(rubric, passing(rubric, "w"))
    assert (scores["B1"], scores["B"]) == (0.0, 0.0)
    assert scores["A"] == 1.0
    assert scores["root"] == pytest.approx(0.5)

    # A failed leaf under the critical C zeroes the root.
    assert score_tree(rubric, passing(rubric, "k"))["root"] == 0.0


def test_a_single_leaf_rubric() -> None:
    rubric = tree(leaf("only", critical=True))
    assert score_tree(rubric, {"only": True}) == {"only": 1.0}
    assert score_tree(rubric, {"only": False}) == {"only": 0.0}


def test_partial_is_not_success() -> None:
    assert success({"root": 1.0, "a": 1.0})
    assert not success({"root": 1.0, "a": 0.5})
    assert not success({"root": 0.8})
    assert not success({})


def test_missing_leaf_is_a_key_error() -> None:
    with pytest.raises(KeyError, match=r"s4\.sort"):
        score_tree(APPENDIX, {k: True for k in APPENDIX_LEAVES if k != "s4.sort"})


def test_extra_entries_are_ignored() -> None:
    scores = score_tree(APPENDIX, {**passing(APPENDIX), "not-a-leaf": False, "root": False})
    assert success(scores)


def test_duplicate_ids_are_refused() -> None:
    rubric = tree(inner("root", inner("a", leaf("root"))))
    with pytest.raises(ValueError, match="'root' is used twice"):
        score_tree(rubric, {"root": True})
