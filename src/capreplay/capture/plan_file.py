"""Reading a capture plan from disk, and making one from command-line URLs."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from capreplay.errors import PlanError, UsageError, validation_reason
from capreplay.models.capture_plan import CapturePlan
from capreplay.util.once import given_once


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
    """The plan the command line describes: the listed pages, or a crawl from them when a limit is given.

    ``same_site`` only narrows a crawl, so without ``depth`` or ``max_pages`` it is refused, not dropped; a URL
    given twice is refused too (it would be captured twice).
    """
    given_once(urls, "URL")
    settle = [{"type": "wait_for_network_idle"}, {"type": "autoscroll"}]
    if depth is None and max_pages is None:
        if same_site:
            raise UsageError("--same-site needs --depth or --max-pages: without them nothing is crawled")
        return parse_plan({"pages": [{"url": u, "actions": settle} for u in urls]}, "URL")
    crawl = {"seeds": urls, "depth": 1 if depth is None else depth, "same_site": same_site, "actions": settle}
    if max_pages is not None:
        crawl["max_pages"] = max_pages
    return parse_plan({"crawl": crawl}, "URL")


def with_crawl_options(
    plan: CapturePlan, where: Path | str, *, depth: int | None, max_pages: int | None, same_site: bool
) -> CapturePlan:
    """``plan`` with the command line's crawl options put into its crawl section: ``depth`` and ``max_pages``
    replace the plan's, ``same_site`` turns its same-site rule on. A plan without a crawl section has nothing
    they could change, so giving them is a :class:`UsageError` rather than an option silently dropped."""
    given = {"depth": depth, "max_pages": max_pages, "same_site": True if same_site else None}
    update = {field: value for field, value in given.items() if value is not None}
    if not update:
        return plan
    names = ", ".join("--" + field.replace("_", "-") for field in update)
    if plan.crawl is None:
        raise UsageError(f"the plan has no 'crawl' section for {names} to change", where)
    data = plan.model_dump(mode="json")
    data["crawl"].update(update)
    return parse_plan(data, f"{where} with {names}")


def parse_maps(values: list[str]) -> dict[str, tuple[str, int]]:
    """``HOST=ADDR:PORT`` options as a dict; a malformed one, or a host mapped twice, is a :class:`UsageError`."""
    maps: dict[str, tuple[str, int]] = {}
    for value in values:
        host, sep, target = value.partition("=")
        addr, colon, port = target.rpartition(":")
        if not sep or not colon or not host or not addr or not port.isdigit():
            raise UsageError(f"--map {value!r}: expected HOST=ADDRESS:PORT, e.g. shop.test=127.0.0.1:8443")
        if host.lower() in maps:  # the later one would silently win
            raise UsageError(f"--map {value!r}: {host} is mapped twice; map each host once")
        maps[host.lower()] = (addr, int(port))
    return maps
