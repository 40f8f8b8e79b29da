"""Objects that hold something open until ``close()``: usable as ``with Thing(...) as thing:``."""

from __future__ import annotations

from types import TracebackType
from typing import Self


class Closing:
    """A base for classes with a ``close()`` method: ``with`` closes them on the way out, whatever happened."""

    def close(self) -> None:
        """Release what the object holds; subclasses say what."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
