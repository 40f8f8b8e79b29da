"""A multi-hop task drafted from a pair of pages: one model call, then a task built and checked without one.

The model reads both pages' text and writes a question whose answer is on one page and needs a value from
the other (the bridge), each with the selector and pattern that read it there, and a passage of each page
as evidence (prompt ``multihop``). Everything after the call is pure: the reply's form
(:func:`parse_draft`), its values and passages on their pages' captured text (:func:`draft_problem`), the
gold path along :func:`capreplay.tasks.graph.path_through` from the start page, and a rubric made without
a model (:func:`multihop_rubric`). A reply that fails any of it is a :class:`Rejection` with the reason.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Self
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from capreplay.errors import ModelError, validation_reason
from capreplay.judge.fields import format_number, iter_numbers, parse_number
from capreplay.llm.messages import ModelRequest
from capreplay.models.rubric import ClaimOnPage, RubricNode, UrlInSnapshot
from capreplay.models.workflow import EvidenceSnippet, ExpectedOutput, GoldStep, Goto, Read, WorkflowTask
from capreplay.tasks.generation import PagePair, Rejection, slug
from capreplay.tasks.graph import SiteGraph, path_through, start_page
from capreplay.tasks.meter import Meter
from capreplay.tasks.multihop.corpus import PageDoc
from capreplay.tasks.pinned import with_expected
from capreplay.tasks.prompts import prompt
from capreplay.tasks.sites import site_of
from capreplay.util.answer_text import normalize_answer

PAGE_CHARS = 6000
"""How much of each page's text the model is shown (the start of the page, where its content is)."""

ValueType = Literal["text", "number"]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Located(_Reply):
    """A value as the draft places it: on which page of the pair, in which element, cut by which pattern."""

    value: str = Field(min_length=1)
    type: ValueType
    page: Literal["seed", "partner"]
    selector: str = Field(min_length=1, description="A Playwright selector of the element holding the value.")
    pattern: str | None = Field(default=None, description="A regular expression whose group 1 is the value.")

    @field_validator("value", mode="before")
    @classmethod
    def _number_as_text(cls, value: Any) -> Any:
        # a reply may give a number as a JSON number; the task keeps every value as text
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            return format_number(float(value))
        return value

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as e:
                raise ValueError(f"not a regular expression: {e}") from e
        return pattern


class Evidence(_Reply):
    """A passage of each page of the pair, copied from it."""

    seed: str = Field(min_length=1)
    partner: str = Field(min_length=1)


class DraftReply(_Reply):
    """The ``multihop`` prompt's reply."""

    question: str = Field(min_length=1)
    answer: Located
    bridge: Located
    evidence: Evidence

    @model_validator(mode="after")
    def _two_pages(self) -> Self:
        if self.answer.page == self.bridge.page:
            raise ValueError(f"the answer and the bridge are both on the {self.answer.page} page")
        return self


@dataclass(frozen=True)
class Draft:
    """A drafted task and what the filters need to check it: the pair, its pages and the model's reply."""

    task: WorkflowTask
    pair: PagePair
    seed: PageDoc
    partner: PageDoc
    reply: DraftReply


def draft_id(pair: PagePair, n: int) -> str:
    """The id of the ``n``-th draft of a batch: ``mh-<slug of the seed's path>-<n>`` (the site for a home page)."""
    parts = urlsplit(pair.seed)
    where = "-".join(p for p in (parts.path.strip("/"), parts.query) if p) or site_of(parts.hostname or "")
    return f"mh-{slug(where)}-{n}"


def draft_request(seed: PageDoc, partner: PageDoc) -> ModelRequest:
    """The ``multihop`` request for a pair: both pages' titles and the start of their text."""
    return prompt("multihop").request(
        seed_url=seed.url, seed_title=seed.title, seed_text=seed.text[:PAGE_CHARS],
        partner_url=partner.url, partner_title=partner.title, partner_text=partner.text[:PAGE_CHARS],
    )  # fmt: skip


def parse_draft(data: Mapping[str, Any]) -> DraftReply | str:
    """The reply's draft, or why it has none (the model declined, or a field is missing or wrong)."""
    if data.get("question") is None:
        reason = data.get("reason")
        return f"the model wrote no question for this pair: {reason}" if reason else "the reply has no question"
    try:
        return DraftReply.model_validate(data)
    except ValidationError as e:
        return f"the draft does not fit the form: {validation_reason(e, top='')}"


def holds_phrase(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` as whole words, both in normal form ("Hard" is not in "hardware")."""
    wanted = normalize_answer(phrase)
    return bool(wanted) and re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", normalize_answer(text)) is not None


def value_on_page(value: str, kind: ValueType, text: str) -> bool:
    """Whether ``text`` shows ``value``: the same number somewhere, or the value as a phrase of it."""
    if kind == "number":
        number = parse_number(value)
        return number is not None and any(math.isclose(m.value, number) for m in iter_numbers(text))
    return holds_phrase(text, value)


def draft_problem(reply: DraftReply, seed: PageDoc, partner: PageDoc) -> str | None:
    """Why the draft does not hold on the captured pages, or None: values and passages must be on their pages."""
    pages = {"seed": seed, "partner": partner}
    for name, located in (("answer", reply.answer), ("bridge", reply.bridge)):
        page = pages[located.page]
        if located.type == "number" and parse_number(located.value) is None:
            return f"the {name} {located.value!r} is typed number but holds none"
        if not value_on_page(located.value, located.type, page.text):
            return f"the {name} {located.value!r} is not on the {located.page} page {page.final_url}"
    for which, passage in (("seed", reply.evidence.seed), ("partner", reply.evidence.partner)):
        page = pages[which]
        if normalize_answer(passage) not in normalize_answer(page.text):
            return f"the {which} evidence is not a passage of {page.final_url}: {passage[:80]!r}"
    if holds_phrase(reply.question, reply.bridge.value):
        return f"the question gives the bridge value away: {reply.bridge.value!r}"
    return None


def _reads(output: str, located: Located) -> list[Read]:
    """Read the page's URL into ``<output>_url``, then the value by selector and pattern into ``output``."""
    return [
        Read(type="read", output=f"{output}_url", source="url"),
        Read(type="read", output=output, source="text", selector=located.selector, pattern=located.pattern),
    ]


def gold_path(walk: list[str], reads: Mapping[str, list[Read]]) -> list[GoldStep]:
    """A ``goto`` to each page of ``walk`` after its first (the start), each page's reads on first arriving."""
    steps: list[GoldStep] = []
    done: set[str] = set()
    for i, url in enumerate(walk):
        if i:
            steps.append(Goto(type="goto", url=url))
        if url in reads and url not in done:
            steps += reads[url]
            done.add(url)
    return steps


def _leaf(node_id: str, description: str, check: UrlInSnapshot | ClaimOnPage) -> RubricNode:
    return RubricNode(id=node_id, description=description, critical=True, kind="other", check=check)


def multihop_rubric(
    task_id: str, description: str, outputs: list[ExpectedOutput], expected: Mapping[str, str]
) -> RubricNode:
    """The rubric of a multi-hop task, made without a model: both pages captured, each value on its page, pinned.

    Every leaf is critical: the answer and the bridge must each be on the page the answer cites for it
    (a number matched as a number, a text as normalised text), and then be the values the pages show
    (:func:`capreplay.tasks.pinned.with_expected`).
    """
    kinds = {o.name: o.type for o in outputs}
    leaves = [
        _leaf("answer-page-captured", "The answer's page is a page of the snapshot",
              UrlInSnapshot(check="url_in_snapshot", field="answer_url")),
        _leaf("bridge-page-captured", "The bridge value's page is a page of the snapshot",
              UrlInSnapshot(check="url_in_snapshot", field="bridge_url")),
        _leaf("answer-on-page", "The answer is on the page cited for it",
              ClaimOnPage(check="claim_on_page", field="answer", url_field="answer_url",
                          match="number" if kinds["answer"] == "number" else "text", claim=None)),
        _leaf("bridge-on-page", "The bridge value is on the page cited for it",
              ClaimOnPage(check="claim_on_page", field="bridge", url_field="bridge_url",
                          match="number" if kinds["bridge"] == "number" else "text", claim=None)),
    ]  # fmt: skip
    grounded = RubricNode(id="on-the-pages", description="Both values are on the pages cited for them",
                          critical=True, children=leaves)  # fmt: skip
    return with_expected(task_id, description, grounded, outputs, expected)


def describe(question: str) -> str:
    """The task's description: the question and what the answer must give."""
    return (
        f"{question} Give the answer (answer), the value from the other page that it depends on (bridge), "
        "and the URL of the page you read each of them on (answer_url, bridge_url)."
    )


def build_task(task_id: str, reply: DraftReply, seed: PageDoc, partner: PageDoc, walk: list[str]) -> WorkflowTask:
    """The workflow task of a draft along ``walk`` (which starts at the start URL); a ValidationError if invalid."""
    pages = {"seed": seed, "partner": partner}
    answer_page, bridge_page = pages[reply.answer.page], pages[reply.bridge.page]
    outputs = [
        ExpectedOutput(name="answer", type=reply.answer.type, role="user_value",
                       description="The answer to the question."),
        ExpectedOutput(name="bridge", type=reply.bridge.type, role="condition_check",
                       description="The value on the other page that the answer depends on."),
        ExpectedOutput(name="answer_url", type="url", role="provenance_url",
                       description="The page the answer was read on."),
        ExpectedOutput(name="bridge_url", type="url", role="provenance_url",
                       description="The page the bridge value was read on."),
    ]  # fmt: skip
    expected = {"answer": reply.answer.value, "bridge": reply.bridge.value}
    description = describe(reply.question)
    visited = sorted((seed, partner), key=lambda doc: walk.index(doc.url))
    reads = {answer_page.url: _reads("answer", reply.answer), bridge_page.url: _reads("bridge", reply.bridge)}
    return WorkflowTask(
        id=task_id,
        description=description,
        sites=list(dict.fromkeys(doc.host for doc in visited)),
        flow="multi_hop",
        start_url=walk[0],
        outputs=outputs,
        rubric=multihop_rubric(task_id, description, outputs, expected),
        gold_path=gold_path(walk, reads),
        expected=dict(expected),
        evidence=[
            EvidenceSnippet(url=seed.final_url, text=reply.evidence.seed),
            EvidenceSnippet(url=partner.final_url, text=reply.evidence.partner),
        ],
    )


def find_walk(graph: SiteGraph, start: str | None, seed: PageDoc, partner: PageDoc) -> list[str] | str:
    """The walk from the start page through both pages, or why graph.json has none."""
    begin = start or start_page(graph, seed.url)
    if begin is None:
        return f"no path in graph.json reaches {seed.url}: the crawl has no seed on its site"
    walk = path_through(graph, begin, [seed.url, partner.url])
    if walk is not None:
        return walk
    lost = next((d.url for d in (seed, partner) if path_through(graph, begin, [d.url]) is None), partner.url)
    return f"no path in graph.json from {begin} reaches {lost}"


async def draft_pair(
    meter: Meter, pair: PagePair, docs: Mapping[str, PageDoc], graph: SiteGraph, *, task_id: str,
    start: str | None = None,
) -> Draft | Rejection:  # fmt: skip
    """The task drafted for ``pair`` (pages looked up in ``docs`` by URL), or why there is none.

    The path through graph.json is found first, so a pair no gold path can serve costs no model call.
    """

    def reject(reason: str) -> Rejection:
        return Rejection(candidate=task_id, stage="multihop", reason=reason)

    seed, partner = docs.get(pair.seed), docs.get(pair.partner)
    if seed is None or partner is None:
        return reject(f"the pair names a page the snapshot does not hold: {pair.partner if seed else pair.seed}")
    walk = find_walk(graph, start, seed, partner)
    if isinstance(walk, str):
        return reject(walk)
    try:
        data, _ = await meter.ask_json("multihop", draft_request(seed, partner))
    except ModelError as e:
        return reject(f"the model call failed: {e.message}")
    if isinstance(data, str):
        return reject(f"the draft reply is unusable: {data}")
    reply = parse_draft(data)
    if isinstance(reply, str):
        return reject(reply)
    problem = draft_problem(reply, seed, partner)
    if problem is not None:
        return reject(problem)
    try:
        task = build_task(task_id, reply, seed, partner, walk)
    except ValidationError as e:
        return reject(f"the draft is not a valid task: {validation_reason(e, top='')}")
    return Draft(task=task, pair=pair, seed=seed, partner=partner, reply=reply)
