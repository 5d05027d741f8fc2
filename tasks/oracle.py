"""Scripted oracles: task-file steps resolved to unified actions through state queries.

An oracle acts exactly as an agent does: it yields `cua.actions` actions, which the
runner performs in the sandbox. To find where to act it reads only what any state
query returns (`DomQuery` bbox/text/selected/attr, `UrlQuery`); it never touches the page
or the app. Coordinates are pixels of the current observation's frame; an element
outside the viewport is scrolled into view with `Scroll` actions first, and every step
that has a checkable outcome (a date typed, an option chosen) is verified by a query.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any
from urllib.parse import urljoin

from pydantic import BaseModel, TypeAdapter

from cua.actions import Action, Click, Done, Drag, Goto, Key, Nav, Point, Scroll, Type, Wait, parse_action
from cua.judges.normalize import norm_text
from cua.launcher import origins as launcher_origins
from cua.state import DomQuery, NavigationQuery, StateQuery, UrlQuery
from cua.task import Oracle, OracleContext
from cua.tasks import format as F
from cua.tasks.phone_oracle import SWIPE_SHARE, PhoneContext, PhoneError, phone_context, to_touch

__all__ = ["OracleError", "build_oracle", "locate", "run_steps"]

#: How far (in scroll steps) an oracle goes to bring an element into view.
MAX_SCROLLS = 12
#: The pause between re-queries of `wait_for`: the sandbox settles after each Wait.
POLL_SECONDS = 0.25


class OracleError(RuntimeError):
    """A scripted step could not be carried out (element missing, value not taken)."""


async def _query(ctx: OracleContext, query: StateQuery) -> Any:
    result = await ctx.query(query)
    if not result.ok:
        raise OracleError(f"query {query.model_dump(exclude_defaults=True)} failed: {result.error}: {result.message}")
    return result.value


def _locator(loc: F.Locator) -> F.LocatorSpec:
    return F.LocatorSpec(selector=loc) if isinstance(loc, str) else loc


def _dom(loc: F.LocatorSpec, prop: str, attr: str | None = None, frame: str | None = None) -> DomQuery:
    return DomQuery(selector=loc.selector, selector_type="xpath" if loc.xpath else "css", prop=prop,  # type: ignore[arg-type]
                    attr=attr, all=True, frame=frame)


async def _match_index(ctx: OracleContext, loc: F.LocatorSpec) -> int | None:
    """The index (among all matches of the selector) of the element the locator means."""
    candidates = await _match_indexes(ctx, loc)
    if not candidates or not -len(candidates) <= loc.index < len(candidates):
        return None
    return candidates[loc.index]


async def _match_indexes(ctx: OracleContext, loc: F.LocatorSpec, frame: str | None = None) -> list[int]:
    """The indexes (among all matches of the selector) of the elements whose text the locator
    asks, in the page or inside the iframe `frame` selects."""
    candidates = list(range(await _query(ctx, DomQuery(selector=loc.selector, selector_type="xpath" if loc.xpath
                                                                else "css", prop="count", frame=frame)) or 0))
    if loc.text is not None or loc.text_contains is not None:
        texts = await _query(ctx, _dom(loc, "text", frame=frame)) or []
        keep = []
        for i in candidates:
            text = norm_text(texts[i]) if i < len(texts) else ""
            if loc.text is not None and text != norm_text(loc.text):
                continue
            if loc.text_contains is not None and norm_text(loc.text_contains) not in text:
                continue
            keep.append(i)
        candidates = keep
    return candidates


def _describe(loc: F.LocatorSpec) -> str:
    extra = "".join(f" {k}={v!r}" for k, v in (("text", loc.text), ("text_contains", loc.text_contains)) if v)
    return f"{loc.selector!r}{extra}" + (f" #{loc.index}" if loc.index else "")


async def locate(ctx: OracleContext, loc: F.Locator) -> tuple[int, dict[str, float]]:
    """(index among the selector's matches, bbox in screen pixels) of the element; raises
    OracleError when it is absent or has no box."""
    spec = _locator(loc)
    index = await _match_index(ctx, spec)
    if index is None:
        raise OracleError(f"no element matches {_describe(spec)} on {ctx.observation.url}")
    boxes = await _query(ctx, _dom(spec, "bbox")) or []
    box = boxes[index] if index < len(boxes) else None
    if not box or box.get("width", 0) <= 0 or box.get("height", 0) <= 0:
        raise OracleError(f"element {_describe(spec)} has no visible box")
    return index, box


def _to_frame(ctx: OracleContext, x: float, y: float) -> tuple[float, float]:
    obs = ctx.observation
    return x * obs.frame.width / obs.screen.width, y * obs.frame.height / obs.screen.height


async def _region(ctx: OracleContext) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) in screen pixels of where the page shows: the whole
    screen, or on a phone the front app's frame."""
    if isinstance(ctx, PhoneContext):
        return await ctx.region()
    screen = ctx.observation.screen
    return 0.0, 0.0, float(screen.width), float(screen.height)


async def _into_view(ctx: OracleContext, loc: F.Locator) -> AsyncIterator[Action | tuple[int, dict[str, float]]]:
    """Yield Scroll actions until the element's centre is inside the viewport, then
    yield its (index, bbox) as the last item."""
    last: tuple[float, float] | None = None
    for _ in range(MAX_SCROLLS + 1):
        index, box = await locate(ctx, loc)
        left, top, right, bottom = await _region(ctx)
        cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        if top + 1 <= cy <= bottom - 1 and left + 1 <= cx <= right - 1:
            if last is not None and isinstance(ctx, PhoneContext) and (await locate(ctx, loc))[1] != box:
                continue  # a swipe's scroll still coasting: tap where it rests
            yield index, box
            return
        if isinstance(ctx, PhoneContext) and await ctx.keyboard_open():
            yield Nav(button="back")  # put the keyboard away: the app gets its height back
            continue
        if last == (cx, cy):
            break  # the last scroll moved nothing: the page cannot bring it closer
        last = (cx, cy)
        mx, my = (left + right) / 2, (top + bottom) / 2
        dy = cy - my
        dx = cx - mx if not left + 1 <= cx <= right - 1 else 0.0
        if isinstance(ctx, PhoneContext):  # a finger's stroke, centred, stays inside the app
            if top + 1 <= cy <= bottom - 1:  # only sideways: swipe along the element's own row
                dy, my = 0.0, cy
            dy = max(-(bottom - top) * SWIPE_SHARE, min((bottom - top) * SWIPE_SHARE, dy))
            dx = max(-(right - left) * SWIPE_SHARE, min((right - left) * SWIPE_SHARE, dx))
            mx, my = mx + dx / 2, my + dy / 2
        px, py = _to_frame(ctx, mx, my)
        fdx, fdy = _to_frame(ctx, dx, dy)
        yield Scroll(x=px, y=py, dx=fdx, dy=fdy)
    raise OracleError(f"could not scroll {_describe(_locator(loc))} into view")


async def _click_at(ctx: OracleContext, loc: F.Locator, *, x_offset: float | None = None, button: str = "left",
                    count: int = 1) -> AsyncIterator[Action | tuple[int, dict[str, float]]]:
    async for item in _into_view(ctx, loc):
        if isinstance(item, tuple):
            index, box = item
            x = box["x"] + (x_offset if x_offset is not None else box["width"] / 2)
            fx, fy = _to_frame(ctx, x, box["y"] + box["height"] / 2)
            yield Click(x=fx, y=fy, button=button, count=count)  # type: ignore[arg-type]
            yield index, box
        else:
            yield item


async def _click(ctx: OracleContext, loc: F.Locator, **kw: Any) -> AsyncIterator[Action]:
    async for item in _click_at(ctx, loc, **kw):
        if not isinstance(item, tuple):
            yield item


def _nth(loc: F.LocatorSpec, index: int) -> F.LocatorSpec:
    """A locator for the index-th match of the bare selector."""
    return F.LocatorSpec(selector=loc.selector, xpath=loc.xpath, index=index)


async def _value_of(ctx: OracleContext, loc: F.LocatorSpec, index: int) -> Any:
    values = await _query(ctx, _dom(loc, "value")) or []
    return values[index] if index < len(values) else None


async def _fill(ctx: OracleContext, args: F.FillArgs) -> AsyncIterator[Action]:
    spec = _locator(args.selector)
    index = await _match_index(ctx, spec)
    if index is None:
        raise OracleError(f"no field matches {_describe(spec)}")
    types = await _query(ctx, _dom(spec, "attr", "type")) or []
    kind = (types[index] or "").lower() if index < len(types) else ""
    target = _nth(spec, index)
    if kind in _TEMPORAL:
        async for action in _fill_temporal(ctx, target, index, kind, args.text):
            yield action
    else:
        async for action in _click(ctx, target):
            yield action
        yield Key(keys=["Control", "a"])
        yield Type(text=args.text) if args.text else Key(keys=["Backspace"])
    if args.submit:
        yield Key(keys=["Enter"])


_TEMPORAL = ("date", "time", "datetime-local")


def _temporal_keys(kind: str, text: str) -> tuple[str, list[list[Action]]]:
    """(the value the input must end with, key sequences to try: en-US order first, then
    day-first / 24-hour locales). Segments auto-advance, except after a year (up to 6 digits)."""
    text = text.strip()
    try:
        if kind == "date":
            day = dt.date.fromisoformat(text)
            return day.isoformat(), [[Type(text=day.strftime("%m%d%Y"))], [Type(text=day.strftime("%d%m%Y"))]]
        if kind == "time":
            t = dt.time.fromisoformat(text)
            value = t.strftime("%H:%M:%S" if t.second else "%H:%M")
            sec = t.strftime("%S") if t.second else ""
            return value, [[Type(text=t.strftime("%I%M") + sec + ("P" if t.hour >= 12 else "A"))],
                           [Type(text=t.strftime("%H%M") + sec)]]
        moment = dt.datetime.fromisoformat(text)
        value = moment.strftime("%Y-%m-%dT%H:%M:%S" if moment.second else "%Y-%m-%dT%H:%M")
        sec = moment.strftime("%S") if moment.second else ""
        us = moment.strftime("%I%M") + sec + ("P" if moment.hour >= 12 else "A")
        return value, [[Type(text=moment.strftime("%m%d%Y")), Key(keys=["ArrowRight"]), Type(text=us)],
                       [Type(text=moment.strftime("%d%m%Y")), Key(keys=["ArrowRight"]), Type(text=moment.strftime("%H%M") + sec)]]
    except ValueError:
        raise OracleError(f"a {kind} input needs an ISO {kind} value, got {text!r}") from None


async def _fill_temporal(ctx: OracleContext, loc: F.LocatorSpec, index: int, kind: str, text: str
                         ) -> AsyncIterator[Action]:
    """Date and time inputs take typed digits segment by segment in the locale's order:
    try each order and check the value by query."""
    value, attempts = _temporal_keys(kind, text)
    for keys in attempts:
        # the first segment sits at the left edge; its centre is about 10 px in
        async for action in _click(ctx, loc, x_offset=10):
            yield action
        for action in keys:
            yield action
        if await _value_of(ctx, loc, index) == value:
            return
    raise OracleError(f"the {kind} input {_describe(loc)} did not take {value}")


async def _select(ctx: OracleContext, args: F.SelectArgs) -> AsyncIterator[Action]:
    spec = _locator(args.selector)
    index = await _match_index(ctx, spec)
    if index is None:
        raise OracleError(f"no select matches {_describe(spec)}")
    target = _nth(spec, index)
    options = F.LocatorSpec(selector=f"{spec.selector} option" if not spec.xpath else f"({spec.selector})[{index + 1}]//option",
                            xpath=spec.xpath)
    if not spec.xpath and index:
        raise OracleError("select: give a selector that matches one <select> (or use xpath)")
    texts = [norm_text(t) for t in (await _query(ctx, _dom(options, "text")) or [])]
    values = await _query(ctx, _dom(options, "attr", "value")) or []
    want = norm_text(args.option)
    if want in texts:
        goal = texts.index(want)
    elif args.option in values:
        goal = values.index(args.option)
    else:
        raise OracleError(f"select {_describe(spec)} has no option {args.option!r} (options: {texts})")

    async def selected() -> int:
        flags = await _query(ctx, _dom(options, "selected")) or []
        return next((i for i, f in enumerate(flags) if f), 0)

    # Clicking opens the option popup; arrows move within it and Enter commits.
    async for action in _click(ctx, target):
        yield action
    delta = goal - await selected()
    for _ in range(abs(delta)):
        yield Key(keys=["ArrowDown" if delta > 0 else "ArrowUp"])
    yield Key(keys=["Enter"])
    if await selected() == goal:
        return
    # No popup opened (arrows already changed the value, Enter reopened it): close it and
    # step from where the selection is now; a closed, focused select changes at once.
    yield Key(keys=["Escape"])
    delta = goal - await selected()
    for _ in range(abs(delta)):
        yield Key(keys=["ArrowDown" if delta > 0 else "ArrowUp"])
    if await selected() != goal:
        raise OracleError(f"select {_describe(spec)} did not take option {args.option!r}")


async def _wait_for(ctx: OracleContext, loc: F.Locator, timeout: float, *, gone: bool = False,
                    frame: str | None = None) -> AsyncIterator[Action]:
    spec = _locator(loc)
    polls = max(1, int(timeout / POLL_SECONDS))
    for _ in range(polls):
        try:
            shown = await _shown(ctx, spec, gone=gone, frame=frame)
        except OracleError:
            if frame is None:
                raise
            shown = False  # the frame is not there yet, or still on a page of no origin of ours
        if shown != gone:
            return
        yield Wait(seconds=POLL_SECONDS)
    raise OracleError(f"{_describe(spec)} {'was still shown after' if gone else 'did not appear within'} {timeout:g} s")


async def _shown(ctx: OracleContext, spec: F.LocatorSpec, *, gone: bool, frame: str | None) -> bool:
    """Whether the element the locator means is shown; with `gone`, whether any match is."""
    matches = await _match_indexes(ctx, spec, frame)
    indexes = list(matches) if gone else [matches[spec.index]] if -len(matches) <= spec.index < len(matches) else []
    if not indexes:
        return False
    visible = await _query(ctx, _dom(spec, "visible", frame=frame)) or []
    return any(i < len(visible) and bool(visible[i]) for i in indexes)


async def _goto(ctx: OracleContext, target: str) -> AsyncIterator[Action]:
    app = re.fullmatch(r"app:([a-z][a-z0-9_]*)(/.*)?", target)
    if app is not None:  # an app by name, at its origin on the apps page the episode started on
        history = await _query(ctx, NavigationQuery())
        entries = history.get("entries", []) if isinstance(history, dict) else []
        found = launcher_origins(str(entries[0].get("url", ""))) if entries else {}
        if app.group(1) not in found:
            raise OracleError(f"goto {target!r}: the episode did not start on an apps page (about:apps) "
                              f"linking app {app.group(1)!r}; it links {sorted(found) or 'none'}")
        yield Goto(url=found[app.group(1)] + (app.group(2) or "/"))
        return
    base = ctx.observation.url or await _query(ctx, UrlQuery())
    yield Goto(url=urljoin(base or "", target))


async def _step(ctx: OracleContext, step: Any) -> AsyncIterator[Action]:
    if isinstance(step, F.ClickStep):
        async for a in _click(ctx, step.click, button=step.button, count=step.count):
            yield a
    elif isinstance(step, F.FillStep):
        async for a in _fill(ctx, step.fill):
            yield a
    elif isinstance(step, F.SelectStep):
        async for a in _select(ctx, step.select):
            yield a
    elif isinstance(step, F.DragStep):
        async for a in _drag(ctx, step.drag):
            yield a
    elif isinstance(step, F.WaitForStep):
        async for a in _wait_for(ctx, step.wait_for, step.timeout, gone=step.gone, frame=step.frame):
            yield a
    elif isinstance(step, F.ScrollToStep):
        async for item in _into_view(ctx, step.scroll_to):
            if not isinstance(item, tuple):
                yield item
    elif isinstance(step, F.PressStep):
        yield Key(keys=step.press)  # type: ignore[arg-type]
    elif isinstance(step, F.TypeStep):
        yield Type(text=step.type_text)
    elif isinstance(step, F.GotoStep):
        async for a in _goto(ctx, step.goto):
            yield a
    elif isinstance(step, F.DoneStep):
        yield Done(status=step.done.status, answer=step.done.answer)
    elif isinstance(step, F.ActionStep):
        yield parse_action(step.action)
    elif isinstance(step, F.RawActionStep):
        yield parse_action(step.model_dump())
    else:
        raise OracleError(f"unknown step {step!r}")


async def _drag(ctx: OracleContext, args: F.DragArgs) -> AsyncIterator[Action]:
    """Bring both ends into view (scrolling their midpoint to the centre), then drag
    through intermediate points: drag-and-drop code often waits for moves past a threshold."""
    last: tuple[float, float] | None = None
    for _ in range(MAX_SCROLLS + 1):
        _, a = await locate(ctx, args.from_)
        _, b = await locate(ctx, args.to)
        screen = ctx.observation.screen
        ays, bys = a["y"] + a["height"] / 2, b["y"] + b["height"] / 2
        if all(1 <= y <= screen.height - 1 for y in (ays, bys)):
            break
        if last == (ays, bys):
            raise OracleError("cannot scroll both ends of the drag into view")
        last = (ays, bys)
        px, py = _to_frame(ctx, screen.width / 2, screen.height / 2)
        _, fdy = _to_frame(ctx, 0, (ays + bys) / 2 - screen.height / 2)
        yield Scroll(x=px, y=py, dy=fdy)
    else:
        raise OracleError("could not scroll both ends of the drag into view")
    ax, ay = _to_frame(ctx, a["x"] + a["width"] / 2, ays)
    bx, by = _to_frame(ctx, b["x"] + b["width"] / 2, bys)
    yield Drag(path=[Point(x=ax + (bx - ax) * t / 8, y=ay + (by - ay) * t / 8) for t in range(9)])


_STEP_LIST: TypeAdapter[list[F.StepSpec]] = TypeAdapter(list[F.StepSpec])


def _as_steps(steps: Sequence[Any]) -> list[Any]:
    return [s if isinstance(s, BaseModel) else _STEP_LIST.validate_python([s])[0] for s in steps]


async def run_steps(ctx: OracleContext, steps: Sequence[Any], params: dict[str, Any] | None = None
                    ) -> AsyncIterator[Action]:
    """Resolve steps (models, or dicts in the task-file vocabulary, filled from `params`
    when given) into actions, one at a time, re-reading state before each."""
    if params is not None:
        from cua.tasks.render import render

        steps = [render(s, params) if isinstance(s, dict) else s for s in steps]
    phone = await phone_context(ctx)
    for step in _as_steps(steps):
        if phone is None:
            async for action in _step(ctx, step):
                yield action
            continue
        async for action in _step(phone, step):  # a phone: by touch, on what is in front
            try:
                yield to_touch(action)
            except PhoneError as exc:
                raise OracleError(str(exc)) from None


def build_oracle(spec: Any, params: dict[str, Any]) -> Oracle:
    """An `Oracle` from a task file's oracle (or near miss, or setup actions) section."""
    if isinstance(spec, F.PythonRef):
        from cua.tasks.params import import_function

        fn = import_function(spec.python)

        def python_oracle(ctx: OracleContext) -> AsyncIterator[Action]:
            actions = fn(ctx, params)
            if not isinstance(actions, AsyncIterator):
                raise OracleError(f"oracle {spec.python} returned {type(actions).__name__}, not an async "
                                  "iterator of actions (write it as an async generator)")
            return actions

        python_oracle.__qualname__ = spec.python
        return python_oracle
    steps = list(spec)

    def scripted(ctx: OracleContext) -> AsyncIterator[Action]:
        return run_steps(ctx, steps)

    return scripted
