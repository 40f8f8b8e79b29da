"""Where things are on a page: an element's box and the layout of the window it was measured in. Plain data."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Box(_Frozen):
    """An element's border box in CSS pixels of the top page, scrolled to the top (so also of the viewport)."""

    x: float
    y: float
    width: float
    height: float

    def contains(self, x: float, y: float) -> bool:
        """Whether the point lies inside the box or on its edge."""
        return self.x <= x <= self.x + self.width and self.y <= y <= self.y + self.height

    def clip(self, width: float, height: float) -> Box | None:
        """The part of the box inside a ``width`` x ``height`` viewport at the origin; None if nothing is."""
        left, top = max(self.x, 0.0), max(self.y, 0.0)
        right, bottom = min(self.x + self.width, width), min(self.y + self.height, height)
        if right <= left or bottom <= top:
            return None
        return Box(x=left, y=top, width=right - left, height=bottom - top)


class Layout(_Frozen):
    """What the page's window measured at one moment of the session."""

    inner_width: int
    """``window.innerWidth`` and the next ones as the page reads them: CSS pixels, the ratio a number."""
    inner_height: int
    device_pixel_ratio: float
    scroll_x: float
    scroll_y: float

    def __str__(self) -> str:
        return (f"{self.inner_width}x{self.inner_height} at {self.device_pixel_ratio:g}x, "
                f"scrolled to ({self.scroll_x:g}, {self.scroll_y:g})")  # fmt: skip
