"""The capture plan: which pages to freeze, what to do on each, and how far to crawl."""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WaitForNetworkIdle(_Action):
    """Wait until the page has had no network activity for 500 ms (bounded by ``timeout_ms``)."""

    type: Literal["wait_for_network_idle"]
    timeout_ms: int = Field(10_000, ge=0, description="Give up waiting after this many milliseconds.")


class Autoscroll(_Action):
    """Scroll down a screen at a time until the page stops growing, so lazy content and every batch of an
    infinite list load: after each step the network must go quiet, and only a page scrolled to its end
    that has not grown since the step before is finished."""

    type: Literal["autoscroll"]
    max_steps: int = Field(40, ge=1, le=1000, description="At most this many scroll steps.")
    pause_ms: int = Field(250, ge=0, description="Pause at least this long after each step for content to load.")
    timeout_ms: int = Field(default=60_000, ge=1000, le=600_000, description="Stop after this long in all.")


class Point(BaseModel):
    """A point inside an element, in CSS pixels from the element's top left corner."""

    model_config = ConfigDict(extra="forbid")

    x: float = Field(ge=0)
    y: float = Field(ge=0)


class Click(_Action):
    """Click the first element matching ``selector``; a navigation it starts is waited for."""

    type: Literal["click"]
    selector: str = Field(min_length=1, description="A Playwright selector.")
    position: Point | None = Field(None, description="Where in the element to click; None: its centre.")


class Fill(_Action):
    """Type ``value`` into the input matching ``selector``."""

    type: Literal["fill"]
    selector: str = Field(min_length=1, description="A Playwright selector.")
    value: str = Field(description="The text to fill in.")


class TypeText(_Action):
    """Type ``value`` with the keyboard into the element matching ``selector``, at its caret: the text selected there
    is replaced, the rest kept (``fill`` replaces the whole value). An editor's toolbar inserts a placeholder and
    selects it, and the user types over it: that is how text goes into such an editor."""

    type: Literal["type"]
    selector: str = Field(min_length=1, description="A Playwright selector; the element is focused first.")
    value: str = Field(min_length=1, description="The text to type (a newline is typed as Enter).")


class Press(_Action):
    """Press a key (or a combination, ``Shift+Home``) in the element matching ``selector``, at its caret: ``End`` moves
    the caret past a heading or bold text an editor's toolbar has just inserted, so that typing goes on after it."""

    type: Literal["press"]
    selector: str = Field(min_length=1, description="A Playwright selector; the element is focused first.")
    key: str = Field(min_length=1, description="A key as Playwright and BrowserGym name it: End, Enter, Shift+Home.")


UPLOADS_FROM = "the working directory"
"""What an ``upload`` step's relative path is resolved against: the working directory, as Playwright's
``set_input_files`` and BrowserGym's ``upload_file`` resolve it. The benchmark's files are committed under
``benchmark/files/`` and its steps name them from the repository's root (``benchmark/files/NAME``), where its
commands run."""


class Upload(_Action):
    """Choose the file ``file`` in the file input (``<input type=file>``) matching ``selector``, as a user picks it
    in the browser's file dialog; the form that holds the input is sent by a later step."""

    type: Literal["upload"]
    selector: str = Field(min_length=1, description="A Playwright selector of the file input.")
    file: str = Field(min_length=1, description=f"The file's path, absolute or relative to {UPLOADS_FROM}.")

    @field_validator("file")
    @classmethod
    def _relative_plain(cls, file: str) -> str:
        if "\\" in file or file.endswith("/"):
            raise ValueError(f"not a path to a file (forward slashes, no trailing one): {file!r}")
        return file


class Select(_Action):
    """Choose the option with ``value`` in the select matching ``selector``."""

    type: Literal["select"]
    selector: str = Field(min_length=1, description="A Playwright selector.")
    value: str = Field(description="The option value to select.")


class Hover(_Action):
    """Move the mouse over the element matching ``selector`` (a chart's point, a card, a menu)."""

    type: Literal["hover"]
    selector: str = Field(min_length=1, description="A Playwright selector.")
    position: Point | None = Field(None, description="Where in the element to hover; None: its centre.")


class Drag(_Action):
    """Press the mouse on the element matching ``selector``, move it by (``dx``, ``dy``) and release it.

    A slider's handle is dragged by pixels, as a user drags it; the viewport is fixed, so the same drag
    gives the same value on every run.
    """

    type: Literal["drag"]
    selector: str = Field(min_length=1, description="A Playwright selector; the drag starts at its centre.")
    dx: float = Field(description="Horizontal distance in CSS pixels (negative: to the left).")
    dy: float = Field(0, description="Vertical distance in CSS pixels (negative: up).")
    steps: int = Field(10, ge=1, le=100, description="Intermediate mouse moves, so the page sees a drag.")


class Scroll(_Action):
    """Scroll the page (or the element matching ``selector``) by ``dy`` pixels, then let loading settle."""

    type: Literal["scroll"]
    selector: str | None = Field(None, description="Scroll inside this element; None: the page.")
    dy: float = Field(description="Vertical distance in CSS pixels (negative: up).")


class Wait(_Action):
    """Wait a fixed time (prefer ``wait_for_network_idle``)."""

    type: Literal["wait"]
    ms: int = Field(ge=0, le=60_000, description="Milliseconds to wait.")


Action = Annotated[
    WaitForNetworkIdle | Autoscroll | Click | Fill | TypeText | Press | Upload | Select | Hover | Drag | Scroll | Wait,
    Field(discriminator="type"),
]


def _check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL with a host: {url!r}")
    return url


class PagePlan(BaseModel):
    """One page to capture and the steps to run on it before it is frozen."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="Absolute http(s) URL of the page.")
    actions: list[Action] = Field(default_factory=list, description="Steps run in order after load.")

    @field_validator("url")
    @classmethod
    def _url(cls, url: str) -> str:
        return _check_url(url)


class CrawlPlan(BaseModel):
    """Breadth-first crawl from seed URLs, following links found in each captured page."""

    model_config = ConfigDict(extra="forbid")

    seeds: list[str] = Field(min_length=1, description="Start URLs; depth 0.")
    depth: int = Field(1, ge=0, le=20, description="Follow links at most this many hops from a seed.")
    max_pages: int = Field(50, ge=1, le=100_000, description="Stop after this many pages in total.")
    same_site: bool = Field(True, description="Only follow links to the seeds' own hosts.")
    actions: list[Action] = Field(default_factory=list, description="Steps run on every crawled page.")

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, seeds: list[str]) -> list[str]:
        return [_check_url(s) for s in seeds]


class CapturePlan(BaseModel):
    """What ``capreplay capture`` freezes: listed pages first, then an optional crawl."""

    model_config = ConfigDict(extra="forbid")

    pages: list[PagePlan] = Field(default_factory=list, description="Pages captured in order.")
    crawl: CrawlPlan | None = Field(None, description="A crawl run after the listed pages.")
    page_timeout_ms: int = Field(30_000, ge=1000, description="Navigation timeout per page.")

    def model_post_init(self, _: object) -> None:
        """A plan must name at least one page, listed or as a crawl seed."""
        if not self.pages and self.crawl is None:
            raise ValueError("the plan names no pages: give 'pages' or 'crawl'")
