"""The review of a proposal against CAP's two criteria, by a model and by a person.

CAP keeps a proposal only if (i) its user intent is a meaningful need, not a contrived combination of
features, and (ii) every value passed between sites is obtained while doing the task, never given in it.
``tasks propose`` asks a model these two questions once per proposal and appends its verdict to the
proposal's ``checks`` as ``{"by": "model", ...}``; a reply that gives no verdict rejects the proposal
(stage ``proposal``), since an unreviewed proposal must not pass for a reviewed one.

A person reviews ``proposals.json`` by hand: to reject a proposal, add a check of their own to its
``checks`` list, e.g.::

    {"by": "person", "meaningful": false, "dynamic": true, "reason": "nobody books a hut from a tent review"}

:attr:`~capreplay.tasks.generation.Proposal.rejected` is the first check that failed, whoever made it, and
``tasks instantiate`` skips every proposal that has one, recording why (:func:`skipped`). A person's passing
check does not overturn a model's failing one; to reconsider such a proposal, delete the model's check.
"""

from __future__ import annotations

from capreplay.llm.messages import ModelRequest
from capreplay.tasks.generation import CardsFile, Proposal, ProposalCheck, Rejection
from capreplay.tasks.meter import Meter
from capreplay.tasks.prompts import prompt
from capreplay.tasks.workflows.render import functions_text, proposal_text


def check_request(proposal: Proposal, cards: CardsFile) -> ModelRequest:
    """The request reviewing ``proposal``, with the functions of the sites it uses."""
    functions = "\n\n".join(f"{site}:\n{functions_text(cards.card(site))}" for site in sorted(proposal.sites))
    return prompt("proposal_check").request(id=proposal.id, functions=functions, proposal=proposal_text(proposal))


def parse_check(reply: dict[str, object] | str) -> ProposalCheck | str:
    """The model's verdict, or why its reply holds none."""
    if isinstance(reply, str):
        return reply
    verdict = {name: reply.get(name) for name in ("meaningful", "dynamic")}
    for name, value in verdict.items():
        if not isinstance(value, bool):
            return f"{name!r} is {value!r}, not true or false"
    reason = reply.get("reason", "")
    if not isinstance(reason, str):
        return f"'reason' is {reason!r}, not a sentence"
    return ProposalCheck.model_validate({"by": "model", **verdict, "reason": " ".join(reason.split())})


async def review(proposal: Proposal, cards: CardsFile, meter: Meter) -> Proposal | Rejection:
    """``proposal`` with the model's check appended, or a rejection when the reply gives no verdict."""
    reply, _ = await meter.ask_json("proposal_check", check_request(proposal, cards))
    verdict = parse_check(reply)
    if isinstance(verdict, str):
        return Rejection(
            candidate=proposal.id, stage="proposal", reason=f"the proposal check gave no verdict: {verdict}"
        )
    return proposal.model_copy(update={"checks": [*proposal.checks, verdict]})


def skipped(proposal: Proposal) -> Rejection | None:
    """Why ``proposal`` is not instantiated (the first failed check), or None when every check passed."""
    failed = proposal.rejected
    if failed is None:
        return None
    criteria = [name for name, held in (("meaningful", failed.meaningful), ("dynamic", failed.dynamic)) if not held]
    who = "the model check" if failed.by == "model" else "a person"
    because = f": {failed.reason}" if failed.reason else ""
    return Rejection(
        candidate=proposal.id, stage="proposal", reason=f"rejected by {who} (not {' and not '.join(criteria)}){because}"
    )
