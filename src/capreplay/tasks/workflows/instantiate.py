"""``tasks instantiate``: each reviewed proposal made a concrete workflow task, with a rubric and pinned values.

One call per proposal that no check rejected (CAP 3.4): the model sees the proposal, every item of its sites'
cards with the page it is on and its selector chain, the list of those sites' pages in the snapshot, and the
captured text of the items' pages with their archived markup (both bounded), so it binds the proposal's open
parts to values the frozen pages really show and writes selectors that exist on them. Its reply is read by
:func:`capreplay.tasks.workflows.instance.parse_instance`; the rubric is then written by the project's own
``make_rubric`` (its calls counted under the ``rubric`` stage), and the expected values are pinned beside it
(:func:`capreplay.tasks.pinned.with_expected`).

Every failure is a :class:`~capreplay.tasks.generation.Rejection` with one line: ``proposal`` for a
proposal a check rejected, ``instance`` for an unusable reply or task, ``rubric`` when no valid rubric came
in ``max_attempts`` calls. Nothing here opens a browser: the proof runs every task on the replay afterwards.
A failed model call raises :class:`capreplay.errors.ModelError`.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError

from capreplay.judge.make_rubric import make_rubric
from capreplay.llm.messages import ModelRequest, ModelResult, ModelSettings, TextBlock
from capreplay.models.workflow import WorkflowTask
from capreplay.replay.store import SnapshotStore
from capreplay.tasks.generation import CardsFile, Proposal, ProposalsFile, Rejection
from capreplay.tasks.meter import Meter
from capreplay.tasks.pinned import with_expected
from capreplay.tasks.prompts import prompt
from capreplay.tasks.snapshot_pages import SnapshotPage, SnapshotView
from capreplay.tasks.workflows.check import skipped
from capreplay.tasks.workflows.instance import parse_instance, with_rubric
from capreplay.tasks.workflows.markup import archived_markup
from capreplay.tasks.workflows.render import Item, item_line, one_line, proposal_text

PROMPTS = ("instantiate",)
"""The prompt files ``tasks instantiate`` uses (``make_rubric``'s prompt is code, not a file)."""
PAGE_CHARS = 3000
"""Captured text shown of one page; the rest is cut."""
MAX_PAGES = 8
"""Item pages shown in one prompt."""
MAX_LISTED = 80
"""Pages of the sites listed by URL and title in one prompt."""


class RubricCalls:
    """``make_rubric``'s model client: the meter's client, every call counted under the ``rubric`` stage.

    Each request gets a first block ``Stage: rubric`` / ``Task: <id>``, as every generation prompt names its
    stage and subject first, so a scripted reply can be picked per task.
    """

    def __init__(self, meter: Meter, task_id: str) -> None:
        self._meter = meter
        self._named = TextBlock(text=f"Stage: rubric\nTask: {task_id}")

    @property
    def settings(self) -> ModelSettings:
        """The settings of the meter's client."""
        return self._meter.client.settings

    async def complete(self, request: ModelRequest) -> ModelResult:
        """One counted call."""
        named = request.model_copy(update={"content": [self._named, *request.content]})
        return await self._meter.ask("rubric", named)

    async def count_tokens(self, request: ModelRequest) -> int | None:
        """The meter's client's count."""
        return await self._meter.client.count_tokens(request)

    async def aclose(self) -> None:
        """Nothing: the meter's client belongs to whoever made the meter."""


def _items(proposal: Proposal, cards: CardsFile) -> list[tuple[str, Item, str]]:
    """(site, item, its line) for every item of the proposal's sites, items of the steps' functions first."""
    used = {(step.site, step.function) for step in proposal.steps}
    found = []
    for site in proposal.sites:
        card = cards.card(site)
        items: list[Item] = [*card.execution_items, *card.perception_items]
        for item in items:
            found.append((site, item, item_line(card, item, location=True)))
    return sorted(found, key=lambda entry: (entry[0], entry[1].function) not in used)


def _page_text(page: SnapshotPage, markup: str | None) -> str:
    text = page.text.strip() or "(no text was captured)"
    if len(text) > PAGE_CHARS:
        text = text[:PAGE_CHARS].rstrip() + "\n[... cut]"
    shown = page.final_url if page.final_url == page.url else f"{page.final_url} (loaded as {page.url})"
    html = f"\nIts markup as archived:\n{markup}" if markup else ""
    return f"### {shown}: {page.title}\nIts text as captured:\n{text}{html}"


def item_pages(proposal: Proposal, cards: CardsFile, view: SnapshotView) -> list[SnapshotPage]:
    """The snapshot's captures of the items' pages (every capture of one URL), at most MAX_PAGES, each once."""
    urls = list(dict.fromkeys(item.location.url for _, item, _ in _items(proposal, cards)))
    pages: dict[tuple[str, str], SnapshotPage] = {}
    for url in urls:
        for page in view.pages:
            if url in (page.url, page.final_url):
                pages.setdefault((page.final_url, page.text), page)
    return list(pages.values())[:MAX_PAGES]


def instantiate_request(
    proposal: Proposal, cards: CardsFile, view: SnapshotView, markup: Mapping[str, str] | None = None
) -> ModelRequest:
    """The request instantiating ``proposal``: its cards' items, its sites' pages, the items' pages' captured text
    and, from ``markup`` (by final URL), their markup, each URL's markup shown once."""
    shown: set[str] = set()

    def page_text(page: SnapshotPage) -> str:
        html = None if page.final_url in shown else (markup or {}).get(page.final_url)
        shown.add(page.final_url)
        return _page_text(page, html)

    listed = dict.fromkeys(f"- {p.url}: {p.title}" for p in view.pages if p.site in proposal.sites)
    return prompt("instantiate").request(
        id=proposal.id,
        proposal=proposal_text(proposal),
        items="\n".join(line for _, _, line in _items(proposal, cards)) or "- (no items)",
        page_list="\n".join(list(listed)[:MAX_LISTED]),
        pages="\n\n".join(page_text(page) for page in item_pages(proposal, cards, view)) or "(none captured)",
    )


async def instance(
    proposal: Proposal, cards: CardsFile, view: SnapshotView, store: SnapshotStore, meter: Meter, *, max_attempts: int
) -> WorkflowTask | Rejection:
    """The task made of one reviewed proposal, or why there is none; ``store`` serves the pages' markup."""
    unknown = [site for site in proposal.sites if site not in {card.site for card in cards.cards}]
    if unknown:
        return Rejection(candidate=proposal.id, stage="instance", reason=f"site {unknown[0]!r} has no card")
    urls = dict.fromkeys(page.final_url for page in item_pages(proposal, cards, view))
    markup = {url: html for url in urls if (html := archived_markup(store, url)) is not None}
    reply, _ = await meter.ask_json("instantiate", instantiate_request(proposal, cards, view, markup))
    draft = parse_instance(reply, proposal, cards)
    if isinstance(draft, str):
        return Rejection(candidate=proposal.id, stage="instance", reason=draft)
    made = await make_rubric(
        RubricCalls(meter, draft.id), draft.description, draft.covered_points, draft.outputs, max_attempts=max_attempts
    )
    if made.rubric is None:
        last = made.attempts[-1].problems
        why = f"; the last: {last[0]}" if last else ""
        return Rejection(candidate=proposal.id, stage="rubric", reason=f"no valid rubric in {len(made.attempts)} "
                         f"attempts{why}")  # fmt: skip
    pinned = with_expected(draft.id, draft.description, made.rubric, draft.outputs, draft.expected or {})
    try:
        return with_rubric(draft, pinned)
    except ValidationError as e:
        return Rejection(candidate=proposal.id, stage="instance", reason=one_line(e))


async def instantiate(
    proposals: ProposalsFile, cards: CardsFile, view: SnapshotView, meter: Meter, *, max_attempts: int = 3
) -> tuple[list[WorkflowTask], list[Rejection]]:
    """Tasks of every proposal no check rejected, in the file's order, and every rejection with its reason.

    The snapshot's archive is opened for the pages' markup (checked against its manifest, as replay opens it).
    """
    tasks: list[WorkflowTask] = []
    rejections: list[Rejection] = []
    store = SnapshotStore(view.root)
    try:
        for proposal in proposals.proposals:
            found = skipped(proposal) or await instance(proposal, cards, view, store, meter, max_attempts=max_attempts)
            if isinstance(found, Rejection):
                rejections.append(found)
            else:
                tasks.append(found)
    finally:
        store.close()
    return tasks, rejections
