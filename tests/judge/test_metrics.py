"""The judge's metrics on hand-built verdicts with hand-computed numbers."""

from __future__ import annotations

from typing import Any

import pytest

from capreplay.judge.metrics import NO_POINT, compute_metrics
from capreplay.judge.tree_score import score_tree, success
from capreplay.judge.verdict import EpisodeVerdict, LeafVerdict
from capreplay.models.workflow import WorkflowTask
from capreplay.report.judge import metrics_table

CHECK = {"check": "numeric_range", "field": "price", "min": 0}


def leaf(node_id: str, kind: str, point: str | None, critical: bool) -> dict[str, Any]:
    return {"id": node_id, "description": node_id, "kind": kind, "point": point, "critical": critical, "check": CHECK}


#  root
#  ├─ step1: act (critical, action, a1 AT15 on shop), per1 (perception, p1 PT27 on maps)
#  └─ step2: per2 (critical, perception, p2 PT03 on shop), fmt (other, no point)
TASK = WorkflowTask.model_validate(
    {
        "id": "laptop",
        "description": "Find me a laptop and the shop's nearest store.",
        "sites": ["shop.example", "maps.example"],
        "flow": "sequential",
        "start_url": "https://shop.example/",
        "covered_points": [
            {"id": "a1", "type": "action", "code": "AT15", "site": "shop.example", "description": "price slider"},
            {"id": "p1", "type": "perception", "code": "PT27", "site": "maps.example", "description": "map pin"},
            {"id": "p2", "type": "perception", "code": "PT03", "site": "shop.example", "description": "badge"},
        ],
        "outputs": [{"name": "price", "type": "number", "role": "user_value", "description": "The price."}],
        "rubric": {
            "id": "root",
            "description": "all",
            "children": [
                {
                    "id": "step1",
                    "description": "shop",
                    "children": [leaf("act", "action", "a1", True), leaf("per1", "perception", "p1", False)],
                },
                {
                    "id": "step2",
                    "description": "maps",
                    "children": [leaf("per2", "perception", "p2", True), leaf("fmt", "other", None, False)],
                },
            ],
        },
        "gold_path": [{"type": "read", "output": "price", "selector": "#price"}],
    }
)
LEAVES = list(TASK.rubric.leaves())


def episode(name: str, agent: str, repeat: int, *failed: str, off_snapshot: bool = False) -> EpisodeVerdict:
    """A scored episode in which the leaves ``failed`` failed, scored with the real scorer."""
    leaves = [LeafVerdict(node=n.id, kind=n.kind or "other", point=n.point, check="numeric_range",
                          critical=n.critical, passed=n.id not in failed, reason="-") for n in LEAVES]  # fmt: skip
    scores = score_tree(TASK.rubric, {v.node: v.passed for v in leaves})
    return EpisodeVerdict(episode=name, task=TASK.id, agent=agent, repeat=repeat, scored=True, leaves=leaves,
                          node_scores=scores, score=scores["root"], passed=success(scores),
                          off_snapshot=off_snapshot)  # fmt: skip


def unscored(name: str, agent: str, repeat: int, *, off_snapshot: bool = False) -> EpisodeVerdict:
    return EpisodeVerdict(episode=name, task=TASK.id, agent=agent, repeat=repeat, scored=False,
                          unscored="the answer is empty", off_snapshot=off_snapshot)  # fmt: skip


VERDICTS = [
    episode("e1", "alpha", 0),  # root 1
    episode("e2", "alpha", 0, "per1"),  # step1 0.0 (its only non-critical leaf failed), root 0.5
    unscored("e3", "alpha", 0),
    episode("e4", "alpha", 1, "act", "per1"),  # step1 gated to 0, root 0.5
    episode("e5", "alpha", 1, "per2", "fmt", off_snapshot=True),  # step2 gated to 0, root 0.5
    episode("b1", "beta", 0, "act", "per1", "per2", "fmt", off_snapshot=True),  # root 0
    unscored("b2", "beta", 0, off_snapshot=True),
]


def test_episode_helper_scores_as_worked_out() -> None:
    assert [v.score for v in VERDICTS] == [1.0, 0.5, None, 0.5, 0.5, 0.0, None]
    assert [v.passed for v in VERDICTS] == [True, False, None, False, False, False, None]


def test_agent_metrics_with_repeats() -> None:
    alpha, beta = compute_metrics(VERDICTS, [TASK]).agents
    assert alpha.agent == "alpha"
    assert (alpha.episodes, alpha.scored, alpha.unscored, alpha.off_snapshot, alpha.repeats) == (5, 4, 1, 1, 2)
    # Partial completion: (1 + 0.5 + 0.5 + 0.5) / 4; repeats 0.75 and 0.5. The unscored e3 is in no mean.
    pc = alpha.partial_completion
    assert pc.value == pytest.approx(0.625)
    assert pc.per_repeat == pytest.approx([0.75, 0.5])
    assert pc.mean == pytest.approx(0.625)
    # t(1) = 12.706, sd 0.1768, n 2: half-width 1.588, clipped to [0, 1].
    assert (pc.low, pc.high) == (0.0, 1.0)
    sr = alpha.success_rate
    assert sr.value == pytest.approx(0.25)
    assert sr.per_repeat == pytest.approx([0.5, 0.0])
    # Action leaves: e1 pass, e2 pass, e4 fail, e5 pass.
    assert alpha.action_score.value == pytest.approx(0.75)
    assert alpha.action_score.per_repeat == pytest.approx([1.0, 0.5])
    # Perception leaves: e1 2/2, e2 1/2, e4 1/2, e5 1/2.
    ps = alpha.perception_score
    assert ps.value == pytest.approx(0.625)
    assert ps.per_repeat == pytest.approx([0.75, 0.5])
    assert ps.mean == pytest.approx(0.625)

    assert (beta.episodes, beta.scored, beta.unscored, beta.off_snapshot, beta.repeats) == (2, 1, 1, 2, 1)
    for metric in (beta.partial_completion, beta.success_rate, beta.action_score, beta.perception_score):
        assert metric.value == 0.0
        assert metric.per_repeat == [0.0]
        assert (metric.low, metric.high) == (None, None)


def test_interval_is_the_t_interval_over_repeats() -> None:
    # Partial completion per repeat 0.75, 0.5, 0.75: mean 2/3, sd 0.1443, t(2) = 4.303, half 0.3586.
    verdicts = [episode("e1", "a", 0, "per1"), episode("e2", "a", 0), episode("e3", "a", 1, "per1"),
                episode("e4", "a", 2), episode("e5", "a", 2, "fmt")]  # fmt: skip
    (metrics,) = compute_metrics(verdicts, [TASK]).agents
    pc = metrics.partial_completion
    assert pc.per_repeat == pytest.approx([0.75, 0.5, 0.75])
    assert pc.mean == pytest.approx(2 / 3)
    assert pc.low == pytest.approx(2 / 3 - 0.35860, abs=1e-4)
    assert pc.high == pytest.approx(1.0)
    # Perception leaves per repeat: 3/4, 1/2, 4/4.
    assert metrics.perception_score.per_repeat == pytest.approx([0.75, 0.5, 1.0])


def test_breakdown_by_code_and_site() -> None:
    alpha, beta = compute_metrics(VERDICTS, [TASK]).agents
    by_code = {code: (m.mean, m.n) for code, m in alpha.by_code.items()}
    # AT15 (act): 3 of 4; PT03 (per2): 3 of 4; PT27 (per1): 2 of 4.
    assert by_code == {"AT15": (0.75, 4), "PT03": (0.75, 4), "PT27": (0.5, 4)}
    assert list(alpha.by_code) == ["AT15", "PT03", "PT27"]
    by_site = {site: (m.mean, m.n) for site, m in alpha.by_site.items()}
    # shop.example: act and per2, 6 of 8; maps.example: per1, 2 of 4; no point: fmt, 3 of 4.
    assert by_site == {"maps.example": (0.5, 4), "shop.example": (0.75, 8), NO_POINT: (0.75, 4)}
    assert list(alpha.by_site)[-1] == NO_POINT
    assert {code: (m.mean, m.n) for code, m in beta.by_code.items()} == {
        "AT15": (0.0, 1), "PT03": (0.0, 1), "PT27": (0.0, 1)}  # fmt: skip


def test_markdown_tables() -> None:
    table = metrics_table(compute_metrics(VERDICTS, [TASK]))
    lines = table.splitlines()
    header = ("| agent | partial completion | success rate | action score | perception score | episodes | unscored "
              "| off-snapshot |")  # fmt: skip
    assert header in lines
    wide = "[0.00, 1.00]"
    assert f"| alpha | 0.62 {wide} | 0.25 {wide} | 0.75 {wide} | 0.62 {wide} | 5 | 1 | 1 |" in lines
    assert "| beta | 0.00 | 0.00 | 0.00 | 0.00 | 2 | 1 | 2 |" in lines
    assert "| type | alpha | beta |" in lines
    assert "| PT27 | 0.50 (n=4) | 0.00 (n=1) |" in lines
    assert "| site | alpha | beta |" in lines
    assert lines[-1] == f"| {NO_POINT} | 0.75 (n=4) | 0.00 (n=1) |"
    assert table.index("| AT15 ") < table.index("| PT03 ") < table.index("| PT27 ")


def test_an_agent_without_scored_episodes_shows_dashes() -> None:
    metrics = compute_metrics([unscored("x", "gamma", 0)], [TASK])
    (gamma,) = metrics.agents
    assert (gamma.episodes, gamma.scored, gamma.unscored) == (1, 0, 1)
    assert gamma.partial_completion.value is None
    assert gamma.by_code == {}
    assert "| gamma | - | - | - | - | 1 | 1 | 0 |" in metrics_table(metrics).splitlines()


def test_inconsistent_input_is_refused() -> None:
    with pytest.raises(ValueError, match="not among the tasks"):
        compute_metrics(VERDICTS, [])
    bad_point = episode("e1", "a", 0).model_copy(
        update={"leaves": [LeafVerdict(node="act", kind="action", point="zz", check="numeric_range", critical=True,
                                       passed=True, reason="-")]})  # fmt: skip
    with pytest.raises(ValueError, match="point 'zz'"):
        compute_metrics([bad_point], [TASK])
    no_score = EpisodeVerdict(episode="e9", task=TASK.id, agent="a", repeat=0, scored=True)
    with pytest.raises(ValueError, match="scored but has no score"):
        compute_metrics([no_score], [TASK])


def test_the_task_has_the_leaves_worked_out_above() -> None:
    assert [n.id for n in LEAVES] == ["act", "per1", "per2", "fmt"]
