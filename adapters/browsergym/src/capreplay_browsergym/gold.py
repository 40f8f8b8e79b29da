"""A scripted BrowserGym agent that follows a task's gold path with BrowserGym's own high-level actions.

It acts only through actions and sees only observations, as any BrowserGym agent does: each gold step's
Playwright selector is looked up in the observation's DOM (``dom_object`` written out as HTML, every marked
element with its ``bid``: :mod:`.observation`, :mod:`.locate`),
and becomes ``click(bid)``, ``fill(bid, value)``, ``select_option(bid, value)``, ``hover(bid)``, ``goto(url)``,
``press(bid, key)``, ``upload_file(bid, file)``, ``scroll(0, dy)`` or ``noop(ms)``; a ``type`` step (text typed
at the caret) is ``focus(bid)`` then ``keyboard_type(value)``; a ``read`` step reads
the element's text or attribute (or the URL) from the observation; the answer is sent with ``send_msg_to_user`` as
one JSON object of the outputs, as capreplay's gold agent answers.

Steps that need a point rather than an element (a click or hover at a position inside an element, a drag by
pixels, a scroll inside an element) are BrowserGym's coordinate actions (``mouse_click``, ``mouse_move``,
``mouse_drag_and_drop``, ``scroll_at``; ``keyboard_type``, for text typed at the caret, is in the same subset),
which are not in its default action set: the agent uses them only when made with ``coordinates=True`` (the
environment then needs an action set with the ``coord`` subset), and :func:`unsupported` says which steps of a
task need them. An element's point comes from
``extra_element_properties`` (its box in the viewport).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from bs4 import BeautifulSoup, Tag
from capreplay.agents.gold import output_value
from capreplay.browser.actions import upload_file
from capreplay.browser.launch import VIEWPORT
from capreplay.errors import CapreplayError
from capreplay.models.capture_plan import (
    Autoscroll,
    Click,
    Drag,
    Fill,
    Hover,
    Press,
    Scroll,
    Select,
    TypeText,
    Upload,
    Wait,
    WaitForNetworkIdle,
)
from capreplay.models.workflow import GoldStep, Goto, Read, WorkflowTask

from capreplay_browsergym.locate import inner_text, select_all
from capreplay_browsergym.observation import dom_html

Outputs = dict[str, str | list[str]]
IDLE_WAIT_MS = 500
NAVIGATION_WAIT_MS = 1000
"""After an action whose navigation outlasted BrowserGym's 500 ms action timeout: how long to wait for it."""
NAVIGATION_WAITS = 5
RETRIES = 3
"""How often an action that timed out without changing the page (after a wait) is sent again."""
LOOKS = 5
"""How often the agent waits (``NAVIGATION_WAIT_MS``) and looks again when a step's selector matches nothing yet."""
_NAVIGATING = "waiting for scheduled navigations to finish"
"""``wait_for_network_idle`` as a ``noop``: BrowserGym already waits for every page to load after each action."""


class GoldPathError(Exception):
    """The gold path cannot be followed on this observation (a selector matches nothing, a pattern fails)."""


class NotOnPage(GoldPathError):
    """A step's selector matches nothing in this observation: the page may not be there yet."""


def unsupported(task: WorkflowTask, coordinates: bool = False) -> list[str]:
    """Why BrowserGym's actions cannot express some step of the gold path; empty when they express every one."""
    reasons = []
    for n, step in enumerate(task.gold_path, start=1):
        point = _needs_point(step)
        if point and not coordinates:
            reasons.append(f"step {n} ({step.type}): {point}, which needs BrowserGym's coordinate actions")
    return reasons


def _needs_point(step: GoldStep) -> str | None:
    if isinstance(step, Click | Hover) and step.position is not None:
        return f"a {step.type} at a point inside the element"
    if isinstance(step, Drag):
        return "a drag by pixels"
    if isinstance(step, Scroll) and step.selector is not None:
        return "a scroll inside an element"
    if isinstance(step, TypeText):
        return "text typed at the caret (keyboard_type)"
    return None


def page_html(obs: Mapping[str, Any]) -> BeautifulSoup:
    """The observation's DOM as HTML, every marked element with its ``bid`` attribute, no-break spaces as spaces:
    Playwright's text selectors take them for spaces, and gitweb writes a line's spaces as ``&nbsp;``."""
    return BeautifulSoup(dom_html(obs["dom_object"]).replace("\xa0", " "), "lxml")


def _element(soup: BeautifulSoup, selector: str) -> Tag:
    found = select_all(soup, selector)
    if not found:
        raise NotOnPage(f"nothing in the observation matches {selector!r}")
    return found[0]


def element_bid(obs: Mapping[str, Any], selector: str) -> str:
    """The ``bid`` of the first element that ``selector`` matches in the observation."""
    element = _element(page_html(obs), selector)
    bid = element.get("bid")
    if not isinstance(bid, str):
        raise GoldPathError(
            f"{selector!r} matches an element BrowserGym did not mark (no bid): BrowserGym marks standard HTML tags"
            " only unless the environment is made with tags_to_mark='all' (an SVG chart's bars, custom elements)"
        )
    return bid


def _text(element: Tag) -> str:
    return inner_text(element)


def read_output(obs: Mapping[str, Any], step: Read) -> str | list[str]:
    """What a ``read`` step reads, from the observation (a list for ``many``), as capreplay's gold agent reads it."""
    if step.source == "url":
        raw = [str(obs["url"])]
    else:
        assert step.selector is not None
        found = select_all(page_html(obs), step.selector)
        if not found:
            raise NotOnPage(f"reading {step.output!r}: nothing in the observation matches {step.selector!r}")
        if step.source == "attribute":
            assert step.attribute is not None
            raw = [str(element.get(step.attribute) or "") for element in found]
        else:
            raw = [_text(element) for element in found]
    try:
        return output_value(step, raw)
    except CapreplayError as e:
        raise GoldPathError(e.message) from e


def _page(obs: Mapping[str, Any]) -> tuple[str, str]:
    """The observation's URL and a digest of its DOM's nodes and strings, without layout: a click that scrolled its
    element into view changed nothing."""
    dom = obs["dom_object"]
    nodes = [document["nodes"] for document in dom["documents"]]
    return str(obs["url"]), hashlib.sha256(json.dumps([dom["strings"], nodes], sort_keys=True).encode()).hexdigest()


def _viewport_height(obs: Mapping[str, Any]) -> float:
    """The viewport's height: the screenshot's (BrowserGym's screenshot is the viewport)."""
    shot = obs.get("screenshot")
    return float(shot.shape[0]) if shot is not None and getattr(shot, "ndim", 0) == 3 else float(VIEWPORT["height"])


def _call(name: str, *args: Any) -> str:
    return f"{name}({', '.join(repr(a) for a in args)})"


class GoldPathAgent:
    """Follows one task's gold path; AgentLab's shape: ``get_action(obs) -> (action, agent_info)``."""

    def __init__(self, task: WorkflowTask, coordinates: bool = False) -> None:
        """``coordinates``: also follow steps that need BrowserGym's coordinate actions (see :func:`unsupported`)."""
        reasons = unsupported(task, coordinates)
        if reasons:
            raise GoldPathError(f"task {task.id!r}: {reasons[0]}")
        self.task = task
        self.coordinates = coordinates
        self.outputs: Outputs = {}
        self._next = 0
        self._scrolls = 0
        self._focused = False  # a type step's element has been focused: its text is typed next
        self._last_extent: tuple[float, float] | None = None
        self._waits = 0
        self._retries = 0
        self._looks = 0
        self._sent: tuple[str, tuple[str, str]] | None = None  # the last action, and the page it was sent on
        self._timed_out = False  # the last action timed out: waiting once before looking at the page again
        self.done = False

    def get_action(self, obs: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """The next action: the gold path's next step on this observation, reads taken on the way; the answer last.

        BrowserGym gives an action 500 ms, a navigation it starts included, so on a busy machine an action can time
        out. When it timed out after it clicked, waiting for the navigation it started, the agent waits (``noop``)
        for the new page. When it timed out otherwise, the input may still have reached the page, with the page's
        change to come: the agent waits once, then sends the action again if the page is as it was when the action
        was sent (same URL, same DOM), and goes on if it is not.

        An action returns once its page has loaded, not once a navigation it started has: BrowserGym may observe
        the page before a clicked link's. When a step's selector matches nothing, the agent waits and looks again,
        taking the reads since its last action again from the new observation; when after a wait the page is
        still as it was when the action was sent (a click that a layout shift made miss), it sends the action again,
        then waits again. Waits and actions sent again count as looks, ``LOOKS`` at most.
        """
        error = str(obs.get("last_action_error") or "")
        if _NAVIGATING in error and self._waits < NAVIGATION_WAITS:
            self._waits += 1
            return _call("noop", NAVIGATION_WAIT_MS), {"step": self._next, "waiting": "navigation"}
        self._waits = 0
        if "TimeoutError" in error and self._sent is not None and not self._timed_out:
            self._timed_out = True
            return _call("noop", NAVIGATION_WAIT_MS), {"step": self._next, "waiting": "timeout"}
        if self._timed_out and self._retries < RETRIES and self._as_sent(obs):
            assert self._sent is not None
            self._timed_out = False
            self._retries += 1
            return self._sent[0], {"step": self._next, "retry": self._retries}
        self._timed_out = False
        self._retries = 0
        action, info = self._next_action(obs)
        if "waiting" not in info:
            self._sent = (action, _page(obs))
        return action, info

    def _as_sent(self, obs: Mapping[str, Any]) -> bool:
        """Whether the page is as it was when the last action was sent (same URL, same DOM)."""
        return self._sent is not None and self._sent[1] == _page(obs)

    def _next_action(self, obs: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        first = self._next
        try:
            action, info = self._follow(obs)
        except NotOnPage:
            if self._looks >= LOOKS:
                raise
            self._looks += 1
            self._next = first  # the reads since the last action are taken again, all from one observation
            resend = self._looks % 2 == 0  # a look after a wait: the action had its time to show
            if resend and self._as_sent(obs):
                assert self._sent is not None
                return self._sent[0], {"step": first, "again": self._looks}
            return _call("noop", NAVIGATION_WAIT_MS), {"step": first + 1, "waiting": "page"}
        self._looks = 0
        return action, info

    def _follow(self, obs: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        while self._next < len(self.task.gold_path):
            step = self.task.gold_path[self._next]
            if isinstance(step, Read):
                self.outputs[step.output] = read_output(obs, step)
                self._next += 1
                continue
            action = self._action(step, obs)
            if action is None:  # a multi-action step (autoscroll) is over
                self._next += 1
                continue
            return action, {"step": self._next + 1, "gold": step.model_dump(mode="json", exclude_none=True)}
        self.done = True
        answer = json.dumps(self.outputs, ensure_ascii=False, indent=1)
        return _call("send_msg_to_user", answer), {"step": None, "outputs": dict(self.outputs)}

    def _action(self, step: GoldStep, obs: Mapping[str, Any]) -> str | None:
        """The action for ``step``; None once a step that takes several actions is complete."""
        if isinstance(step, Autoscroll):
            return self._autoscroll(step, obs)
        action, done = self._single(step, obs)
        if done:
            self._next += 1
        return action

    def _single(self, step: GoldStep, obs: Mapping[str, Any]) -> tuple[str, bool]:
        """The action for one step, and whether it completes the step (False: a scroll to bring its point in view)."""
        if isinstance(step, Goto):
            return _call("goto", step.url), True
        if isinstance(step, Wait):
            return _call("noop", step.ms), True
        if isinstance(step, WaitForNetworkIdle):
            return _call("noop", IDLE_WAIT_MS), True
        if isinstance(step, Scroll) and step.selector is None:
            return _call("scroll", 0, step.dy), True
        if isinstance(step, TypeText) and self._focused:
            self._focused = False
            return _call("keyboard_type", step.value), True
        assert isinstance(step, Click | Fill | TypeText | Press | Upload | Select | Hover | Drag | Scroll)
        assert step.selector is not None
        bid = element_bid(obs, step.selector)
        if isinstance(step, Fill):
            return _call("fill", bid, step.value), True
        if isinstance(step, TypeText):
            self._focused = True  # focus keeps the caret and the selection the page left in the element
            return _call("focus", bid), False
        if isinstance(step, Press):
            return _call("press", bid, step.key), True
        if isinstance(step, Upload):
            return _call("upload_file", bid, str(upload_file(step.file))), True
        if isinstance(step, Select):
            return _call("select_option", bid, step.value), True
        if isinstance(step, Click | Hover) and step.position is None:
            return _call("click" if isinstance(step, Click) else "hover", bid), True
        return self._at_point(step, bid, obs)

    def _at_point(self, step: Click | Hover | Drag | Scroll, bid: str, obs: Mapping[str, Any]) -> tuple[str, bool]:
        # Coordinate actions act where the point is in the viewport now; BrowserGym does not scroll to it first.
        box = obs["extra_element_properties"].get(bid, {}).get("bbox")
        if not box:
            raise GoldPathError(f"{step.selector!r} (bid {bid}) is not rendered: it has no box to act at")
        left, top, width, height = box
        if isinstance(step, Click | Hover) and step.position is not None:
            x, y = left + step.position.x, top + step.position.y
        else:
            x, y = left + width / 2, top + height / 2
        viewport = _viewport_height(obs)
        if not 0 <= y < viewport:
            return _call("scroll", 0, round(y - viewport / 2)), False
        if isinstance(step, Click | Hover):
            return _call("mouse_click" if isinstance(step, Click) else "mouse_move", x, y), True
        if isinstance(step, Drag):
            return _call("mouse_drag_and_drop", x, y, x + step.dx, y + step.dy), True
        return _call("scroll_at", x, y, 0, step.dy), True

    def _autoscroll(self, step: Autoscroll, obs: Mapping[str, Any]) -> str | None:
        # A screen at a time until the page is scrolled to its end and has not grown since the scroll before.
        document = obs["dom_object"]["documents"][0]
        offset, height = float(document.get("scrollOffsetY", 0)), float(document.get("contentHeight", 0))
        viewport = _viewport_height(obs)
        at_end = offset + viewport >= height - 1
        if self._scrolls >= step.max_steps or (at_end and self._last_extent == (offset, height)):
            self._scrolls, self._last_extent = 0, None
            return None
        self._scrolls += 1
        self._last_extent = (offset, height)
        return _call("scroll", 0, viewport)
