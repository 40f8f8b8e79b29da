"""``tasks propose``: CAP's workflow proposals over groups of related sites, each reviewed by a model.

For every site group :func:`capreplay.tasks.workflows.affinity.combinations` gives, one call shows the
cards of the group's sites (functions, execution and perception items), their affinities, the four flow
patterns and the rule that values passed between sites are found during the task, and asks for
``per_call`` proposals ⟨scenario, pattern, steps, planned outputs⟩. Each proposal in the reply gets the next
id (``prop-001``, ``prop-002``, ... in the order of groups and replies, so a re-run from the cache gives the
same ids), must validate as a :class:`~capreplay.tasks.generation.Proposal` (whose flow is checked against
its pattern) and may only refer to what exists: the group's sites, their cards' functions, and passing
information along pairs whose affinity is not low. A proposal that fails is a rejection with its reason;
one that passes is reviewed (:mod:`capreplay.tasks.workflows.check`). Proposals beyond ``per_call`` in one
reply are not read.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import count
from typing import Any

from pydantic import ValidationError

from capreplay.llm.messages import ModelRequest
from capreplay.tasks.generation import (
    Affinity,
    CallCost,
    CardsFile,
    Made,
    Proposal,
    ProposalsFile,
    Rejection,
    StageCost,
)
from capreplay.tasks.meter import Meter
from capreplay.tasks.prompts import prompt, prompt_hashes
from capreplay.tasks.workflows.affinity import assess, combinations
from capreplay.tasks.workflows.check import review
from capreplay.tasks.workflows.render import card_text, one_line

PROMPTS = ("affinity", "propose", "proposal_check")
"""The prompts ``tasks propose`` uses."""
_FIELDS = ("scenario", "pattern", "steps", "planned_outputs")


def proposal_ids() -> Iterator[str]:
    """``prop-001``, ``prop-002``, ...: the ids proposals get in the order they are read."""
    return (f"prop-{n:03d}" for n in count(1))


def propose_request(
    group: tuple[str, ...], cards: CardsFile, affinities: list[Affinity], per_call: int
) -> ModelRequest:
    """The request for ``per_call`` proposals over the sites of ``group``."""
    inside = [a for a in affinities if set(a.sites) <= set(group)]
    rated = "\n".join(f"- {a.sites[0]} and {a.sites[1]}: {a.level} ({a.reason})" for a in inside)
    # the count keeps one group's line from being the start of a larger group's ("a, b" of "a, b, c")
    return prompt("propose").request(
        number=str(len(group)),
        sites=", ".join(group),
        count=str(per_call),
        affinities=rated,
        cards="\n\n".join(card_text(cards.card(site)) for site in group),
    )


def reference_problems(
    proposal: Proposal, group: tuple[str, ...], cards: CardsFile, affinities: list[Affinity]
) -> list[str]:
    """What ``proposal`` refers to that does not exist: a site outside the group, a function no card lists,
    information passed along a pair rated low."""
    problems: list[str] = []
    low = {frozenset(a.sites) for a in affinities if a.level == "low"}
    site_of_step = {step.id: step.site for step in proposal.steps}
    for step in proposal.steps:
        if step.site not in group:
            problems.append(f"step {step.id} is on {step.site!r}, not one of the sites asked for ({', '.join(group)})")
            continue
        if step.function not in {f.id for f in cards.card(step.site).functions}:
            problems.append(f"step {step.id} uses {step.function}, which the card of {step.site} does not list")
        for need in step.needs:
            if frozenset((site_of_step[need], step.site)) in low:
                problems.append(f"step {step.id} on {step.site} takes from {need} on {site_of_step[need]}, "
                                "a pair of sites rated low")  # fmt: skip
    return problems


def read_proposal(element: object, proposal_id: str) -> Proposal | str:
    """One proposal of a reply under ``proposal_id``, or why it is unusable (one line).

    Only the proposal's own fields are read: an id or checks the model wrote are not its to give.
    """
    if not isinstance(element, dict):
        return "a proposal is not a JSON object"
    data: dict[str, Any] = {name: element[name] for name in _FIELDS if name in element}
    if isinstance(data.get("pattern"), str):
        data["pattern"] = data["pattern"].strip().lower().replace("-", "_")
    try:
        return Proposal.model_validate({"id": proposal_id, **data})
    except ValidationError as e:
        return one_line(e)


def parse_proposals(
    reply: dict[str, Any] | str,
    group: tuple[str, ...],
    cards: CardsFile,
    affinities: list[Affinity],
    ids: Iterator[str],
    per_call: int,
) -> list[Proposal | Rejection]:
    """The proposals of one reply, in order, each valid or rejected; ids are drawn from ``ids``.

    A reply with no list of proposals is one rejection, named after the group (``a.test+b.test``).
    """
    elements = reply.get("proposals") if isinstance(reply, dict) else None
    if not isinstance(elements, list) or not elements:
        why = reply if isinstance(reply, str) else "the reply has no non-empty list 'proposals'"
        return [Rejection(candidate="+".join(group), stage="proposal", reason=f"no proposals read: {why}")]
    found: list[Proposal | Rejection] = []
    for element in elements[:per_call]:
        proposal_id = next(ids)
        proposal = read_proposal(element, proposal_id)
        if isinstance(proposal, str):
            found.append(Rejection(candidate=proposal_id, stage="proposal", reason=proposal))
        elif problems := reference_problems(proposal, group, cards, affinities):
            found.append(Rejection(candidate=proposal_id, stage="proposal", reason=problems[0]))
        else:
            found.append(proposal)
    return found


def cost_of(calls: list[CallCost]) -> dict[str, StageCost]:
    """The calls summed by stage."""
    total: dict[str, StageCost] = {}
    for call in calls:
        total[call.stage] = total.get(call.stage, StageCost()).plus(call)
    return dict(sorted(total.items()))


async def propose(
    cards: CardsFile, cards_sha256: str, meter: Meter, model: dict[str, Any], *, per_call: int = 2
) -> ProposalsFile:
    """Affinities of the cards' sites, proposals over every group of related sites, each reviewed by a model.

    ``model`` is the settings that change answers (``ModelSettings.output_settings()``), recorded in the file;
    the file's cost counts the calls made here. A failed model call raises
    :class:`capreplay.errors.ModelError`; a re-run answers the calls made before it from the cache.
    """
    if per_call < 1:
        raise ValueError(f"per_call must be at least 1, not {per_call}")
    start = len(meter.calls)
    affinities = await assess(cards, meter)
    ids = proposal_ids()
    proposals: list[Proposal] = []
    rejected: list[Rejection] = []
    for group in combinations(affinities):
        reply, _ = await meter.ask_json("propose", propose_request(group, cards, affinities, per_call))
        for found in parse_proposals(reply, group, cards, affinities, ids, per_call):
            checked = found if isinstance(found, Rejection) else await review(found, cards, meter)
            if isinstance(checked, Rejection):
                rejected.append(checked)
            else:
                proposals.append(checked)
    made = Made(
        snapshot_id=cards.made.snapshot_id,
        model=model,
        prompts=prompt_hashes(*PROMPTS),
        cost=cost_of(meter.calls[start:]),
    )
    return ProposalsFile(made=made, cards_sha256=cards_sha256, affinities=affinities, proposals=proposals,
                         rejected=rejected)  # fmt: skip
