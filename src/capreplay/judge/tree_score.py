"""Scoring a rubric tree from its leaves' pass/fail (CAP, section 4.4). Pure, no I/O.

A leaf scores 1 if it passed, else 0. An inner node scores 0 if any critical child scored below 1
(gating); once every critical child scored 1, it scores the mean of its non-critical children
(averaging), or 1 if it has none. The root's score is the answer's partial completion; the answer
succeeds when every node scored 1.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping

from capreplay.models.rubric import RubricNode


def _score(node: RubricNode, leaf_passed: Mapping[str, bool], scores: dict[str, float]) -> float:
    if not node.children:
        score = 1.0 if leaf_passed[node.id] else 0.0
    else:
        children = [(child, _score(child, leaf_passed, scores)) for child in node.children]
        if any(child.critical and s < 1.0 for child, s in children):
            score = 0.0
        else:
            optional = [s for child, s in children if not child.critical]
            score = statistics.fmean(optional) if optional else 1.0
    scores[node.id] = score
    return score


def score_tree(rubric: RubricNode, leaf_passed: Mapping[str, bool]) -> dict[str, float]:
    """Every node's score, by node id, given whether each leaf passed.

    Raises KeyError (with the leaf's id) if a leaf has no entry in ``leaf_passed``, and ValueError if
    two nodes share an id. Entries for ids that are not leaves of ``rubric`` are ignored.
    """
    seen: set[str] = set()
    for node in rubric.walk():
        if node.id in seen:
            raise ValueError(f"rubric node id {node.id!r} is used twice")
        seen.add(node.id)
    scores: dict[str, float] = {}
    _score(rubric, leaf_passed, scores)
    return scores


def success(scores: Mapping[str, float]) -> bool:
    """Whether the answer succeeded: every node scored 1 (and there is at least one node)."""
    return bool(scores) and all(score == 1.0 for score in scores.values())
