"""Judging episodes: the answer read into fields, every leaf checked (grounded ones on the snapshot), the tree scored.

The judge runs on the snapshot the agent ran on (the run names it) and never sees the agent's key: its model
calls use the judge's own settings and key, through the response cache, so judging a run again gives the same
verdicts without a call. An answer whose fields cannot be read, or a claim the model could not decide, leaves the
episode unscored with the reason; an episode with no answer at all is scored, and fails every leaf.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from capreplay.errors import ModelError
from capreplay.judge.checks import VALUE_CHECKS, run_value_check
from capreplay.judge.claims import find_number, find_text
from capreplay.judge.fields import as_list, as_text, format_number, parse_number
from capreplay.judge.ground import Grounding
from capreplay.judge.read_answer import (
    claim_request,
    extraction_request,
    fields_from_json,
    parse_claim,
    parse_fields,
)
from capreplay.judge.tree_score import score_tree, success
from capreplay.judge.verdict import EpisodeVerdict, Evidence, Extraction, LeafVerdict
from capreplay.llm.cache import cache_key
from capreplay.llm.client import ModelClient
from capreplay.models.episode import EpisodeRecord
from capreplay.models.rubric import ClaimOnPage, RubricNode, UrlInSnapshot
from capreplay.models.workflow import LIST_TYPES, WorkflowTask

NO_MODEL = "the {what} needs the judge's model, and no judge key is set (CAPREPLAY_JUDGE_API_KEY or ANTHROPIC_API_KEY)"
"""Why an episode is unscored when a call is needed and there is no key; ``what`` is extraction or claim."""


class Unscored(Exception):
    """The episode cannot be scored; the message says why."""


@dataclass
class Judge:
    """What judging needs: the snapshot served and rendered, and the judge's model (None: no key)."""

    grounding: Grounding
    client: ModelClient | None


def _leaf_verdict(leaf: RubricNode, passed: bool, reason: str, evidence: Sequence[Evidence] = ()) -> LeafVerdict:
    assert leaf.check is not None and leaf.kind is not None
    return LeafVerdict(
        node=leaf.id,
        kind=leaf.kind,
        point=leaf.point,
        check=leaf.check.check,
        critical=leaf.critical,
        passed=passed,
        reason=reason,
        evidence=list(evidence),
    )


async def _call(judge: Judge, request: Any, what: str) -> tuple[str, Any]:
    if judge.client is None:
        raise Unscored(NO_MODEL.format(what=what))
    try:
        result = await judge.client.complete(request)
    except ModelError as e:
        raise Unscored(f"the {what} call failed ({e.kind}): {e.message}") from e
    return result.text, result


def _url_evidence(judge: Judge, url: str) -> Evidence | None:
    record = judge.grounding.archived(url)
    if record is None or (record.status is not None and record.status >= 400):
        return None
    return Evidence(url=url, record_id=record.record_id, payload_digest=record.warc_header("WARC-Payload-Digest"))


def _url_check(leaf: RubricNode, check: UrlInSnapshot, fields: Mapping[str, Any], judge: Judge) -> LeafVerdict:
    value = fields.get(check.field)
    urls = as_list(value) if isinstance(value, list) else ([t] if (t := as_text(value)) else None)
    if not urls:
        return _leaf_verdict(leaf, False, f"field {check.field!r} gives no URL")
    evidence: list[Evidence] = []
    for url in urls:
        found = _url_evidence(judge, url)
        if found is None:
            return _leaf_verdict(leaf, False, f"{url} is not a page of the snapshot", evidence)
        evidence.append(found)
    return _leaf_verdict(leaf, True, f"{len(urls)} URL(s) of {check.field!r} are pages of the snapshot", evidence)


async def _claim(leaf: RubricNode, check: ClaimOnPage, fields: Mapping[str, Any], judge: Judge) -> LeafVerdict:
    url = as_text(fields.get(check.url_field))
    value = fields.get(check.field)
    if not url:
        return _leaf_verdict(leaf, False, f"no URL is cited for {check.field!r} (field {check.url_field!r})")
    if value is None:
        return _leaf_verdict(leaf, False, f"field {check.field!r} is missing")
    sources = await judge.grounding.sources(url)
    if isinstance(sources, str):
        return _leaf_verdict(leaf, False, f"{url}: {sources}", [Evidence(url=url)])
    if check.match == "number":
        number = parse_number(value)
        if number is None:
            return _leaf_verdict(leaf, False, f"field {check.field!r} holds no number: {value!r}")
        found = find_number(sources, number, check.tolerance)
        shown = format_number(number)
    elif check.match == "text":
        text = as_text(value)
        if not text:
            return _leaf_verdict(leaf, False, f"field {check.field!r} holds no text: {value!r}")
        found = find_text(sources, text)
        shown = repr(text)
    else:
        assert check.claim is not None
        claim = check.claim.replace("{value}", str(value))
        reply, _ = await _call(judge, claim_request(claim, url, sources[0].text), f"claim of leaf {leaf.id!r}")
        decided = parse_claim(reply)
        if isinstance(decided, str):
            raise Unscored(f"leaf {leaf.id!r}: {decided}")
        holds, quote = decided
        page = sources[0]
        evidence = Evidence(url=url, record_id=page.record_id, payload_digest=page.payload_digest, snippet=quote[:300])
        return _leaf_verdict(
            leaf,
            holds,
            f"the judge model says the page {'supports' if holds else 'does not support'}: {claim}",
            [evidence],
        )
    if found is None:
        return _leaf_verdict(leaf, False, f"{shown} is not on {url}", [Evidence(url=url)])
    return _leaf_verdict(leaf, True, f"{shown} is on {url}", [found])


async def _check(leaf: RubricNode, fields: Mapping[str, Any], judge: Judge) -> LeafVerdict:
    check = leaf.check
    assert check is not None
    if check.check in VALUE_CHECKS:
        return run_value_check(leaf, fields)
    if isinstance(check, UrlInSnapshot):
        return _url_check(leaf, check, fields, judge)
    assert isinstance(check, ClaimOnPage)
    return await _claim(leaf, check, fields, judge)


async def read_fields(task: WorkflowTask, answer: str | None, judge: Judge) -> tuple[dict[str, Any], Extraction | None]:
    """The answer's fields and how they were read; raises :class:`Unscored` when they cannot be."""
    if answer is None or not answer.strip():
        return {}, None
    direct = fields_from_json(answer, task.outputs)
    if direct is not None:
        return direct, Extraction(method="json")
    request = extraction_request(task, answer)
    reply, result = await _call(judge, request, "free-text answer (extraction)")
    parsed = parse_fields(reply, task.outputs)
    if parsed.values is None:
        raise Unscored(parsed.unparseable or "the extraction reply is unusable")
    assert judge.client is not None
    extraction = Extraction(
        method="model",
        request_sha256=cache_key("complete", judge.client.settings, request),
        model=result.model,
        cached=result.cached,
        usage=result.usage,
    )
    return _typed(task, parsed.values), extraction


def _typed(task: WorkflowTask, values: dict[str, Any]) -> dict[str, Any]:
    # A model may give a one-item list as a bare string; the checks read both, but keep lists as lists.
    return {k: [v] if task.output(k).type in LIST_TYPES and isinstance(v, str) else v for k, v in values.items()}


async def judge_episode(record: EpisodeRecord, task: WorkflowTask, judge: Judge) -> EpisodeVerdict:
    """The verdict on one episode."""
    clock = time.monotonic()
    base: dict[str, Any] = {
        "episode": record.key.id(),
        "task": task.id,
        "agent": record.key.agent,
        "repeat": record.key.repeat,
        "off_snapshot": bool(record.off_snapshot),
    }
    extraction: Extraction | None = None
    fields: dict[str, Any] | None = None
    try:
        fields, extraction = await read_fields(task, record.answer, judge)
        leaves = [await _check(leaf, fields, judge) for leaf in task.rubric.leaves()]
    except Unscored as e:
        return EpisodeVerdict(
            **base,
            scored=False,
            unscored=str(e),
            fields=fields,
            extraction=extraction,
            judge_s=round(time.monotonic() - clock, 3),
        )
    scores = score_tree(task.rubric, {leaf.node: leaf.passed for leaf in leaves})
    return EpisodeVerdict(
        **base,
        scored=True,
        fields=fields,
        extraction=extraction,
        leaves=leaves,
        node_scores=scores,
        score=scores[task.rubric.id],
        passed=success(scores),
        judge_s=round(time.monotonic() - clock, 3),
    )
