"""Reading a capture plan from disk, and making one from command-line URLs."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from capreplay.errors import PlanError, UsageError, validation_reason
from capreplay.models.capture_plan import CapturePlan


def load_plan(path: Path) -> CapturePlan:
    """Parse and validate a plan file; any problem is one :class:`PlanError` naming the file."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise PlanError("no such file", path) from e
    except (OSError, UnicodeDecodeError) as e:
        raise PlanError(f"cannot read: {e}", path) from e
    except json.JSONDecodeError as e:
        raise PlanError(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}", path) from e
    return parse_plan(raw, where=str(path))


def parse_plan(raw: object, where: str = "plan") -> CapturePlan:
    """Validate plan data; the first validation error becomes a one-line :class:`PlanError`."""
    try:
        return CapturePlan.model_validate(raw)
    except ValidationError as e:
        raise PlanError(validation_reason(e, 'plan'), where) from e


def plan_from_urls(urls: list[str], *, depth: int | None, max_pages: int | None, same_site: bool) -> CapturePlan:
    """The plan the command line describes: the listed pages, or a crawl from them when a limit is given."""
    settle = [{"type": "wait_for_network_idle"}, {"type": "autoscroll"}]
    if depth is None and max_pages is None:
        return parse_plan({"pages": [{"url": u, "actions": settle} for u in urls]}, "URL")
    crawl = {"seeds": urls, "depth": 1 if depth is None else depth, "same_site": same_site, "actions": settle}
    if max_pages is not None:
        crawl["max_pages"] = max_pages
    return parse_plan({"crawl": crawl}, "URL")


def parse_maps(values: list[str]) -> dict[str, tuple[str, int]]:
    """``HOST=ADDR:PORT`` options as a dict; a malformed one is a :class:`UsageError`."""
    maps: dict[str, tuple[str, int]] = {}
    for value in values:
        host, sep, target = value.partition("=")
        addr, colon, port = target.rpartition(":")
        if not sep or not colon or not host or not addr or not port.isdigit():
            raise UsageError(f"--map {value!r}: expected HOST=ADDRESS:PORT, e.g. shop.test=127.0.0.1:8443")
        maps[host.lower()] = (addr, int(port))
    return maps
