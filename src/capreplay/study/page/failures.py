"""A page that cannot be studied costs that page alone: its failure is kept in one line, the others go on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel, ConfigDict, Field

from capreplay.errors import BrowserError, CapreplayError, ReplayError

PAGE_ERRORS = (BrowserError, ReplayError, PlaywrightError, TimeoutError)
"""What costs one page: it did not load, or the browser, the replay server or the browser-use adapter failed
during its session. A task file that names no element (an ``InputError``) is the user's to fix and stops
the command with exit status 2."""


def failure_text(error: BaseException) -> str:
    """What went wrong with a page, in one line of at most 500 characters."""
    text = error.line() if isinstance(error, CapreplayError) else f"{type(error).__name__}: {error}"
    return " ".join(text.split())[:500]


class PageFailure(BaseModel):
    """A page whose session did not load or broke, and why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    page: str = Field(description="The page id.")
    url: str
    error: str = Field(description="What went wrong, in one line.")

    def line(self) -> str:
        """``page ID (URL): error``, as the command line prints it."""
        return f"page {self.page} ({self.url}): {self.error}"


class PageFailures:
    """Collects the failures of one command's page sessions; use :meth:`guard` around each page."""

    def __init__(self) -> None:
        self.failures: list[PageFailure] = []

    @asynccontextmanager
    async def guard(self, page: str, url: str) -> AsyncIterator[None]:
        """Run the block for one page; an error of capreplay's or of the browser ends this page only."""
        try:
            yield
        except PAGE_ERRORS as e:
            self.failures.append(PageFailure(page=page, url=url, error=failure_text(e)))
