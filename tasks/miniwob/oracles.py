"""Scripted solutions for MiniWoB++ tasks: read the page's request and its widgets with
DOM queries, then act only through unified actions (clicks, typing), as an agent does.
Whether they succeed is decided by MiniWoB's own JavaScript reward, not by these.

Each solver is `async def fn(ctx, params) -> AsyncIterator[Action]`; `solve` dispatches on
the task name in params, `near_miss` does a plausible wrong thing for the same task.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from cua.actions import Action, Click, Wait
from cua.state import DomQuery
from cua.task import OracleContext
from cua.tasks.oracle import OracleError, run_steps

Steps = list[dict[str, Any]]


async def _dom(ctx: OracleContext, selector: str, prop: str = "text", *, all: bool = False, attr: str | None = None,
               xpath: bool = False) -> Any:
    result = await ctx.query(DomQuery(selector=selector, prop=prop, all=all, attr=attr,  # type: ignore[arg-type]
                                      selector_type="xpath" if xpath else "css"))
    if not result.ok:
        raise OracleError(f"cannot read {selector}: {result.message}")
    return result.value


async def _utterance(ctx: OracleContext) -> str:
    return re.sub(r"\s+", " ", str(await _dom(ctx, "#query") or "")).strip()


def _asked(pattern: str, u: str) -> re.Match[str]:
    """The parts of request `u` that `pattern` finds; a request of another shape is an
    OracleError (the task changed, or the oracle misread it)."""
    m = re.search(pattern, u)
    if m is None:
        raise OracleError(f"unexpected request: {u!r}")
    return m


def _quoted(text: str) -> list[str]:
    return re.findall(r'"([^"]*)"', text)


def _submit() -> dict[str, Any]:
    return {"click": "#subbtn"}


async def click_button(ctx: OracleContext, u: str) -> Steps:
    return [{"click": {"selector": "#area button", "text": _quoted(u)[0]}}]


async def click_button_sequence(ctx: OracleContext, u: str) -> Steps:
    return [{"click": "#subbtn"}, {"click": "#subbtn2"}]


def _names(u: str) -> list[str]:
    m = re.match(r"Select (.*) and click Submit\.", u)
    if not m or m.group(1) == "nothing":
        return []
    return [n.strip() for n in m.group(1).split(",") if n.strip()]


async def click_checkboxes(ctx: OracleContext, u: str) -> Steps:
    """Make each box's state match the request (some variants start with boxes ticked)."""
    wanted = set(_names(u))
    labels = [str(t).strip() for t in (await _dom(ctx, "#area label", all=True) or [])]
    checked = await _dom(ctx, "#area label input", "checked", all=True) or []
    if len(labels) != len(checked):
        raise OracleError("cannot pair the checkboxes with their labels")
    steps: Steps = [{"click": {"selector": "#area label", "text": name}}
                    for name, on in zip(labels, checked) if (name in wanted) != bool(on)]
    return [*steps, _submit()]


async def click_collapsible(ctx: OracleContext, u: str) -> Steps:
    return [{"click": "#area h3"}, {"wait_for": "#subbtn"}, _submit()]


async def click_dialog(ctx: OracleContext, u: str) -> Steps:
    return [{"click": ".ui-dialog-titlebar-close"}]


async def click_dialog_2(ctx: OracleContext, u: str) -> Steps:
    label = _quoted(u)[0]
    if label == "x":
        return [{"click": ".ui-dialog-titlebar-close"}]
    return [{"click": {"selector": ".ui-dialog-buttonpane button", "text": label}}]


async def click_link(ctx: OracleContext, u: str) -> Steps:
    return [{"click": {"selector": "#area .alink", "text": _quoted(u)[0]}}]


async def click_option(ctx: OracleContext, u: str) -> Steps:
    return [{"click": {"selector": "#area label", "text": _names(u)[0]}}, _submit()]


async def click_tab(ctx: OracleContext, u: str) -> Steps:
    n = _asked(r"Tab #(\d+)", u)
    return [{"click": f'#area ul a[href="#tabs-{n.group(1)}"]'}]


async def click_tab_2(ctx: OracleContext, u: str) -> Steps:
    word = _quoted(u)[0]
    tabs = await _dom(ctx, "#area ul a", "count")
    for i in range(1, int(tabs or 0) + 1):
        links = await _dom(ctx, f"#tabs-{i} .alink", all=True) or []
        if word in [str(t).strip() for t in links]:
            return [{"click": f'#area ul a[href="#tabs-{i}"]'},
                    {"click": {"selector": f"#tabs-{i} .alink", "text": word}}]
    raise OracleError(f"no tab holds the link {word!r}")


async def click_test(ctx: OracleContext, u: str) -> Steps:
    return [{"click": "#subbtn"}]


async def click_test_2(ctx: OracleContext, u: str) -> Steps:
    return [{"click": "#subbtn" if "ONE" in u else "#subbtn2"}]


async def click_widget(ctx: OracleContext, u: str) -> Steps:
    return [{"click": f'#area [data-type="{_quoted(u)[0]}"]'}]


async def choose_list(ctx: OracleContext, u: str) -> Steps:
    m = _asked(r"^Select (.*) from the list and click Submit\.", u)
    return [{"select": {"selector": "#options", "option": m.group(1)}},
            {"click": {"selector": "#area button", "text": "Submit"}}]


async def copy_paste(ctx: OracleContext, u: str) -> Steps:
    text = str(await _dom(ctx, "#to-copy", "value") or "")
    return [{"fill": {"selector": "#answer-input", "text": text}}, _submit()]


async def enter_date(ctx: OracleContext, u: str) -> Steps:
    m = _asked(r"(\d{2})/(\d{2})/(\d{4})", u)
    return [{"fill": {"selector": "#tt", "text": f"{m.group(3)}-{m.group(1)}-{m.group(2)}"}}, _submit()]


async def enter_password(ctx: OracleContext, u: str) -> Steps:
    pw = _quoted(u)[0]
    return [{"fill": {"selector": "#password", "text": pw}}, {"fill": {"selector": "#verify", "text": pw}}, _submit()]


async def enter_text(ctx: OracleContext, u: str) -> Steps:
    return [{"fill": {"selector": "#tt", "text": _quoted(u)[0]}}, _submit()]


async def enter_text_2(ctx: OracleContext, u: str) -> Steps:
    text = _quoted(u)[0]
    text = text.upper() if "upper case" in u else text.lower()
    return [{"fill": {"selector": "#tt", "text": text}}, _submit()]


async def enter_time(ctx: OracleContext, u: str) -> Steps:
    m = _asked(r"(\d{1,2}):(\d{2})\s*([AP]M)", u)
    hour = int(m.group(1)) % 12 + (12 if m.group(3) == "PM" else 0)
    return [{"fill": {"selector": "#tt", "text": f"{hour:02d}:{m.group(2)}"}}, _submit()]


async def find_word(ctx: OracleContext, u: str) -> Steps:
    m = _asked(r"(\d+)(st|nd|rd|th) word", u)
    words = str(await _dom(ctx, "#area p") or "").split()
    return [{"fill": {"selector": "#answer-input", "text": words[int(m.group(1)) - 1]}}, _submit()]


async def focus_text(ctx: OracleContext, u: str) -> Steps:
    return [{"click": "#tt"}]


async def focus_text_2(ctx: OracleContext, u: str) -> Steps:
    m = _asked(r"(\d)(st|nd|rd|th) input", u)
    return [{"click": f"#tt{m.group(1)}"}]


async def login_user(ctx: OracleContext, u: str) -> Steps:
    user, password = _quoted(u)[:2]
    return [{"fill": {"selector": "#username", "text": user}}, {"fill": {"selector": "#password", "text": password}},
            _submit()]


async def read_table(ctx: OracleContext, u: str) -> Steps:
    m = _asked(r"Enter the value of (.*) into the text field", u)
    cells = [str(c).strip() for c in (await _dom(ctx, "#tab td", all=True) or [])]
    values = dict(zip(cells[0::2], cells[1::2]))
    if m.group(1) not in values:
        raise OracleError(f"the table has no {m.group(1)!r}")
    return [{"fill": {"selector": "#tt", "text": values[m.group(1)]}}, _submit()]


async def simple_arithmetic(ctx: OracleContext, u: str) -> Steps:
    m = re.match(r"\s*(-?\d+)\s*([-+x])\s*(-?\d+)", str(await _dom(ctx, "#math-problem") or ""))
    if not m:
        raise OracleError("cannot read the math problem")
    a, op, b = int(m.group(1)), m.group(2), int(m.group(3))
    answer = a + b if op == "+" else a - b if op == "-" else a * b
    return [{"fill": {"selector": "#math-answer", "text": str(answer)}}, _submit()]


async def _episode_started(ctx: OracleContext) -> AsyncIterator[Action]:
    """Wait until the shim has started the episode (its report element is hidden, so
    `wait_for`, which wants a visible element, does not fit)."""
    for _ in range(40):
        if await _dom(ctx, "#cua-wob[data-utterance]", "count"):
            return
        yield Wait(seconds=0.25)
    raise OracleError("the MiniWoB episode did not start (no #cua-wob report on the page)")


async def grid_coordinate(ctx: OracleContext, u: str) -> Steps:
    m = _asked(r"\((-?\d+),\s*(-?\d+)\)", u)
    return [{"click": f'circle[id="({m.group(1)},{m.group(2)})"]'}]


async def click_color(ctx: OracleContext, u: str) -> Steps:
    """The colour is named in bold, or shown as a swatch whose style names it."""
    named = await _dom(ctx, "#query .bold")
    if named:
        color = str(named).strip()
    else:
        style = str(await _dom(ctx, "#query-color", "attr", attr="style") or "")
        m = re.search(r"background-color:\s*([^;]+)", style)
        if not m:
            raise OracleError("cannot tell which colour is asked for")
        color = m.group(1).strip()
    return [{"click": f'#area .color[data-color="{color}"]'}]


async def multi_orderings(ctx: OracleContext, u: str) -> Steps:
    """The fields come in a random order: find each input by its row's label."""
    genre, director, year = [str(t).strip() for t in (await _dom(ctx, "#query b", all=True) or [])][:3]

    def field(label: str, text: str) -> dict[str, Any]:
        return {"fill": {"selector": {"selector": f"//tr[normalize-space(th)='{label}']//input", "xpath": True},
                         "text": text}}

    return [field("Genre", genre), field("Director", director), field("Year", year), {"click": "#area .final"}]


async def search_engine(ctx: OracleContext, u: str) -> Steps:
    """Search, go to the results page holding the n-th result (three per page), click it."""
    m = _asked(r"click the (\d+)(st|nd|rd|th) search result", u)
    n = int(m.group(1))
    page = (n - 1) // 3 + 1
    steps: Steps = [{"fill": {"selector": "#search-text", "text": _quoted(u)[0]}}, {"click": "#search"},
                    {"wait_for": "#page-content a.search-title"}]
    if page > 1:
        steps.append({"click": {"selector": "#pagination a", "text": str(page)}})
    target = f'#page-content a.search-title[data-result="{n - 1}"]'
    return [*steps, {"wait_for": target}, {"click": target}]


async def use_spinner(ctx: OracleContext, u: str) -> Steps:
    m = _asked(r"Select (-?\d+) with the spinner", u)
    n = int(m.group(1))
    arrow = ".ui-spinner-up" if n > 0 else ".ui-spinner-down"
    return [*({"click": arrow} for _ in range(abs(n))), _submit()]


async def click_collapsible_2(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """Find the section whose (hidden) text holds the link, open it, click the link."""
    word = _quoted(u)[0]
    sections = int(await _dom(ctx, "#area h3", "count") or 0)
    for i in range(1, sections + 1):
        panel = f"#area h3:nth-of-type({i}) + div"
        links = [str(t).strip() for t in (await _dom(ctx, f"{panel} .alink", all=True) or [])]
        if word in links:
            async for action in run_steps(ctx, [{"click": f"#area h3:nth-of-type({i})"},
                                                {"wait_for": {"selector": f"{panel} .alink", "text": word}}]):
                yield action
            # jQuery UI slides the panel open (~400 ms): wait until it has stopped moving,
            # or the click lands where the link was a moment before.
            yield Wait(seconds=0.6)
            async for action in run_steps(ctx, [{"click": {"selector": f"{panel} .alink", "text": word}}]):
                yield action
            return
    raise OracleError(f"no section holds the link {word!r}")


async def login_user_popup(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """Log in; a popup may open when a field gets focus: dismiss it (Cancel, never OK,
    which ends the episode) and fill that field again."""
    user, password = _quoted(u)[:2]
    for selector, text in (("#username", user), ("#password", password)):
        for _ in range(2):
            async for action in run_steps(ctx, [{"fill": {"selector": selector, "text": text}}]):
                yield action
            if not await _dom(ctx, "#popup", "count"):
                break
            async for action in run_steps(ctx, [{"click": "#popup-cancel"}]):
                yield action
    async for action in run_steps(ctx, [_submit()]):
        yield action


async def navigate_tree(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """Open the folders on the path to the named item (outermost first), then click it."""
    name = _quoted(u)[0]
    target = f"//span[normalize-space()='{name}'][1]"
    ancestors = f"{target}/parent::li/ancestor::li/span[contains(@class, 'folder')]"
    names = [str(t).strip() for t in (await _dom(ctx, ancestors, all=True, xpath=True) or [])]
    for folder in names:
        selector = f"//span[contains(@class, 'folder')][normalize-space()='{folder}']"
        async for action in run_steps(ctx, [{"click": {"selector": selector, "xpath": True}}]):
            yield action
    async for action in run_steps(ctx, [{"wait_for": {"selector": target, "xpath": True}},
                                        {"click": {"selector": target, "xpath": True}}]):
        yield action


async def guess_number(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """Binary search on 0..9 with the page's higher/lower feedback."""
    low, high = 0, 9
    for _ in range(5):
        guess = (low + high) // 2
        async for action in run_steps(ctx, [{"fill": {"selector": "#tt", "text": str(guess)}}, _submit()]):
            yield action
        if await _dom(ctx, "#higher:not(.hide)", "count"):
            low = guess + 1
        elif await _dom(ctx, "#lower:not(.hide)", "count"):
            high = guess - 1
        else:
            return  # correct: the episode has ended
    raise OracleError("the number was not found in five guesses")


async def use_autocomplete(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """Type the prefix, then pick the suggestion with the asked-for ending from the menu."""
    quoted = _quoted(u)
    start, end = quoted[0], quoted[1] if len(quoted) > 1 else ""
    async for action in run_steps(ctx, [{"fill": {"selector": "#tags", "text": start}},
                                        {"wait_for": ".ui-autocomplete .ui-menu-item"}]):
        yield action
    items = [str(t).strip() for t in (await _dom(ctx, ".ui-autocomplete .ui-menu-item-wrapper", all=True) or [])]
    pick = next((t for t in items if t.startswith(start) and t.endswith(end)), None)
    if pick is None:
        raise OracleError(f"no suggestion starts with {start!r} and ends with {end!r}: {items}")
    async for action in run_steps(ctx, [{"click": {"selector": ".ui-autocomplete .ui-menu-item-wrapper", "text": pick}},
                                        _submit()]):
        yield action


SOLVERS: dict[str, Callable[[OracleContext, str], Awaitable[Steps]]] = {
    "click-button": click_button, "click-button-sequence": click_button_sequence,
    "click-checkboxes": click_checkboxes, "click-checkboxes-large": click_checkboxes,
    "click-collapsible": click_collapsible, "click-dialog": click_dialog, "click-dialog-2": click_dialog_2,
    "click-link": click_link, "click-option": click_option, "click-tab": click_tab, "click-tab-2": click_tab_2,
    "click-test": click_test, "click-test-2": click_test_2, "click-widget": click_widget,
    "choose-list": choose_list, "copy-paste": copy_paste, "enter-date": enter_date,
    "enter-password": enter_password, "enter-text": enter_text, "enter-text-2": enter_text_2,
    "enter-time": enter_time, "find-word": find_word, "focus-text": focus_text, "focus-text-2": focus_text_2,
    "login-user": login_user, "read-table": read_table, "simple-arithmetic": simple_arithmetic,
    "enter-text-dynamic": enter_text, "use-spinner": use_spinner, "grid-coordinate": grid_coordinate,
    "click-color": click_color, "multi-orderings": multi_orderings, "search-engine": search_engine,
    "click-checkboxes-transfer": click_checkboxes,
}
#: Tasks whose later steps depend on what the page shows after the first ones.
INTERACTIVE: dict[str, Callable[[OracleContext, str], AsyncIterator[Action]]] = {
    "use-autocomplete": use_autocomplete, "click-collapsible-2": click_collapsible_2,
    "login-user-popup": login_user_popup, "navigate-tree": navigate_tree, "guess-number": guess_number,
}


def solvers() -> set[str]:
    """The tasks with a scripted solution."""
    return set(SOLVERS) | set(INTERACTIVE)


async def solve(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Solve the task named by `params["task"]` once the page shows its request."""
    task = str(params["task"])
    solver = SOLVERS.get(task)
    interactive = INTERACTIVE.get(task)
    if solver is None and interactive is None:
        raise OracleError(f"no scripted solution for MiniWoB task {task!r}")
    async for action in _episode_started(ctx):
        yield action
    if interactive is not None:
        async for action in interactive(ctx, await _utterance(ctx)):
            yield action
        return
    assert solver is not None
    steps = await solver(ctx, await _utterance(ctx))
    async for action in run_steps(ctx, steps):
        yield action


async def near_miss(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """A plausible wrong episode: act on the page without doing what was asked (click
    the request text, then stop), which must leave MiniWoB's episode unrewarded."""
    async for action in _episode_started(ctx):
        yield action
    async for action in run_steps(ctx, [{"click": "#query"}]):
        yield action


# ---------------------------------------------------------------- more tasks (DOM read, then unified actions)

async def _center(ctx: OracleContext, selector: str, *, xpath: bool = False) -> tuple[float, float]:
    box = await _dom(ctx, selector, "bbox", xpath=xpath)
    if not box:
        raise OracleError(f"{selector} is not on the page")
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


async def _act(ctx: OracleContext, steps: Steps) -> AsyncIterator[Action]:
    async for action in run_steps(ctx, steps):
        yield action


async def click_test_transfer(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """The two buttons are placed at random and may overlap: click a point of the asked one
    that the other does not cover (its centre can be under the other button)."""
    m = _asked(r"Click button (\w+)\.", u)
    target, other = ("#subbtn", "#subbtn2") if m.group(1) == "ONE" else ("#subbtn2", "#subbtn")
    box, cover = await _dom(ctx, target, "bbox"), await _dom(ctx, other, "bbox")
    if not box:
        raise OracleError(f"no button {m.group(1)}")

    def covered(x: float, y: float) -> bool:
        return bool(cover) and cover["x"] <= x <= cover["x"] + cover["width"] and \
            cover["y"] <= y <= cover["y"] + cover["height"]

    points = [(box["x"] + box["width"] * fx, box["y"] + box["height"] * fy)
              for fy in (0.5, 0.2, 0.8) for fx in (0.5, 0.15, 0.85)]
    free = [p for p in points if not covered(*p)]
    if not free:
        raise OracleError(f"button {m.group(1)} is covered by the other one")
    x, y = free[0]
    yield Click(x=round(x), y=round(y))


async def copy_paste_2(ctx: OracleContext, u: str) -> Steps:
    m = _asked(r"(\d)(st|nd|rd|th) text area", u)
    text = str(await _dom(ctx, f"#text-{m.group(1)}", "value") or "")
    return [{"fill": {"selector": "#answer-input", "text": text}}, _submit()]


async def read_table_2(ctx: OracleContext, u: str) -> Steps:
    cells = [str(c).strip() for c in (await _dom(ctx, "#tab td", all=True) or [])]
    values = dict(zip(cells[0::2], cells[1::2]))
    steps: Steps = []
    for n in (1, 2):
        key = str(await _dom(ctx, f"#ll{n}", "attr", attr="data-key") or "")
        if key not in values:
            raise OracleError(f"the table has no {key!r}")
        steps.append({"fill": {"selector": f"#tt{n}", "text": values[key]}})
    return [*steps, _submit()]


async def text_transform(ctx: OracleContext, u: str) -> Steps:
    text = "".join(str(t) for t in (await _dom(ctx, "#captcha span", all=True) or []))
    return [{"fill": {"selector": "#tt", "text": text}}, _submit()]


async def find_greatest(ctx: OracleContext, u: str) -> Steps:
    values = [int(str(v).strip()) for v in (await _dom(ctx, "#cardholder .card .card-value", all=True) or [])]
    if not values:
        raise OracleError("no cards on the page")
    best = values.index(max(values))
    return [{"click": f'#cardholder .card[data-index="{best}"]'}, {"click": "#submit"}]


async def odd_or_even(ctx: OracleContext, u: str) -> Steps:
    numbers = [int(str(v).strip()) for v in (await _dom(ctx, "#numbers .display-number", all=True) or [])]
    steps: Steps = [{"click": {"selector": "#numbers .row " + (".odd" if n % 2 else ".even"), "index": i}}
                    for i, n in enumerate(numbers)]
    return [*steps, {"click": "#submit"}]


async def simple_algebra(ctx: OracleContext, u: str) -> Steps:
    problem = re.sub(r"\s+", " ", str(await _dom(ctx, "#math-problem") or "")).strip()
    m = re.fullmatch(r"x ([-+]) (\d+) = (-?\d+)", problem)
    n = re.fullmatch(r"(\d+) ([-+]) x = (-?\d+)", problem)
    if m:
        d, total = int(m.group(2)), int(m.group(3))
        answer = total - d if m.group(1) == "+" else total + d
    elif n:
        d, total = int(n.group(1)), int(n.group(3))
        answer = total - d if n.group(2) == "+" else d - total
    else:
        raise OracleError(f"cannot read the problem {problem!r}")
    return [{"fill": {"selector": "#math-answer", "text": str(answer)}}, _submit()]


async def identify_shape(ctx: OracleContext, u: str) -> Steps:
    kinds = {"rect": "rectangle", "circle": "circle", "polygon": "triangle"}
    for tag, kind in kinds.items():
        if await _dom(ctx, f"#area_svg {tag}", "count"):
            return [{"click": f'#area-buttons button[data-type="{kind}"]'}]
    text = str(await _dom(ctx, "#area_svg text") or "").strip()
    if not text:
        raise OracleError("no figure on the page")
    return [{"click": f'#area-buttons button[data-type="{"digit" if text.isdigit() else "letter"}"]'}]


async def scroll_text(ctx: OracleContext, u: str) -> Steps:
    words = str(await _dom(ctx, "#text-area", "value") or "").split()
    if not words:
        raise OracleError("the text area is empty")
    return [{"fill": {"selector": "#answer-input", "text": re.sub(r"[^A-Za-z0-9]", "", words[-1])}}, _submit()]


async def generate_number(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """Press Generate until the shown number meets the request, then Submit."""
    less, more = re.search(r"less than (\d+)", u), re.search(r"greater than (\d+)", u)

    def fits(n: int) -> bool:
        if less:
            return n < int(less.group(1))
        if more:
            return n > int(more.group(1))
        return n % 2 == (1 if "odd" in u else 0)

    for _ in range(30):
        async for action in _act(ctx, [{"click": "#generate"}]):
            yield action
        shown = str(await _dom(ctx, "#display-number") or "").strip()
        if shown.lstrip("-").isdigit() and fits(int(shown)):
            async for action in _act(ctx, [{"click": "#submit"}]):
                yield action
            return
    raise OracleError("no fitting number in 30 tries")


async def _scroll_inside(ctx: OracleContext, selector: str, dy: int) -> AsyncIterator[Action]:
    from cua.actions import Scroll

    x, y = await _center(ctx, selector)
    yield Scroll(x=round(x), y=round(y), dy=dy)


async def scroll_text_2(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    async for action in _scroll_inside(ctx, "#text-area", 5000 if "bottom" in u else -5000):
        yield action
    async for action in _act(ctx, [_submit()]):
        yield action


async def sign_agreement(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    if u.startswith("Click the cancel button"):
        async for action in _act(ctx, [{"click": "#cancel"}]):
            yield action
        return
    name = _quoted(u)[0]
    async for action in _scroll_inside(ctx, "#text-area", 20000):
        yield action
    button = "#agree" if u.endswith('"Agree"') else "#cancel"
    async for action in _act(ctx, [{"wait_for": "#name:not([disabled])"}, {"fill": {"selector": "#name", "text": name}},
                                   {"click": button}]):
        yield action


async def click_tab_2_medium(ctx: OracleContext, u: str) -> Steps:
    """As click-tab-2, but the link may be on no tab: then the empty second tab is the answer."""
    try:
        return await click_tab_2(ctx, u)
    except OracleError:
        return [{"click": '#area ul a[href="#tabs-2"]'}]


SOLVERS.update({
    "click-collapsible-nodelay": click_collapsible, "click-tab-2-easy": click_tab_2,
    "click-tab-2-medium": click_tab_2_medium, "click-tab-2-hard": click_tab_2,
    "unicode-test": click_button, "copy-paste-2": copy_paste_2, "read-table-2": read_table_2,
    "text-transform": text_transform, "find-greatest": find_greatest, "odd-or-even": odd_or_even,
    "simple-algebra": simple_algebra, "identify-shape": identify_shape, "scroll-text": scroll_text,
})
INTERACTIVE.update({
    "click-collapsible-2-nodelay": click_collapsible_2, "use-autocomplete-nodelay": use_autocomplete,
    "generate-number": generate_number, "scroll-text-2": scroll_text_2, "sign-agreement": sign_agreement,
})


def _xpath_text(text: str) -> str:
    return f'"{text}"' if '"' not in text else f"'{text}'"


async def _into_pane(ctx: OracleContext, target: DomQuery, pane: str) -> AsyncIterator[Action]:
    """Scroll the pane (a scrolled list inside the page) until the target is inside it; a
    pane that does not scroll (the target overhangs it, unclipped) is left as it is."""
    from cua.actions import Scroll

    before = None
    for _ in range(12):
        box = (await ctx.query(target.model_copy(update={"prop": "bbox"}))).value
        area = await _dom(ctx, pane, "bbox")
        if not box or not area:
            raise OracleError(f"cannot find {target.selector} in {pane}")
        top, bottom = box["y"], box["y"] + box["height"]
        if top >= area["y"] and bottom <= area["y"] + area["height"] or top == before:
            return
        before = top
        dy = round(top - area["y"] - 5) if top < area["y"] else round(bottom - area["y"] - area["height"] + 5)
        yield Scroll(x=round(area["x"] + area["width"] / 2), y=round(area["y"] + area["height"] / 2), dy=dy)
    raise OracleError(f"could not scroll {target.selector} into {pane}")


async def email_inbox(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    async for action in _into_pane(ctx, DomQuery(selector=_email_thread((await _bold(ctx, u))[0]), selector_type="xpath"),
                                   "#main"):
        yield action
    async for action in _act(ctx, await _email_steps(ctx, u)):
        yield action


async def _bold(ctx: OracleContext, u: str) -> list[str]:
    bold = [str(t).strip() for t in (await _dom(ctx, "#query .bold", all=True) or [])]
    if not bold:
        raise OracleError(f"unexpected request: {u!r}")
    return bold


def _email_thread(name: str) -> str:
    return (f"//div[@id='main']//div[contains(@class, 'email-thread')]"
            f"[.//*[contains(@class, 'email-sender')][normalize-space()={_xpath_text(name)}]]")


async def _email_steps(ctx: OracleContext, u: str) -> Steps:
    """Find the sender's thread in the inbox, then delete, star, reply or forward."""
    bold = await _bold(ctx, u)
    thread = _email_thread(bold[0])

    def x(path: str) -> dict[str, Any]:
        return {"selector": path, "xpath": True}

    if "trash icon" in u:
        return [{"click": x(f"{thread}//span[contains(@class, 'trash')]")}]
    if "star icon" in u:
        return [{"click": x(f"{thread}//span[contains(@class, 'star')]")}]
    if not ("reply to them" in u or "forward that email" in u):
        raise OracleError(f"unexpected request: {u!r}")
    opened: list[dict[str, Any]] = [{"click": x(f"{thread}//*[contains(@class, 'email-sender')]")}, {"wait_for": "#email"}]
    if "reply to them" in u:
        return [*opened, {"click": "#email .email-reply"}, {"fill": {"selector": "#reply-text", "text": bold[1]}},
                {"click": "#send-reply"}]
    if "forward that email" in u:
        return [*opened, {"click": "#email .email-forward"},
                {"fill": {"selector": "#forward .forward-sender", "text": bold[1]}}, {"click": "#send-forward"}]
    raise OracleError(f"unexpected request: {u!r}")


INTERACTIVE.update({name: email_inbox for name in (
    "email-inbox", "email-inbox-delete", "email-inbox-forward", "email-inbox-important", "email-inbox-noscroll",
    "email-inbox-reply", "email-inbox-star-reply")})


SOCIAL_ACTIONS = {"Share via DM": "share", "Copy link to Tweet": "copy", "Embed Tweet": "embed", "Mute": "menu-user",
                  "Block": "block-user", "Report": "report", "Reply": "reply", "Retweet": "retweet", "Like": "like",
                  "Share": "share"}


async def _click_in_pane(ctx: OracleContext, selector: str, pane: str | None = "#area", *,
                         xpath: bool = False) -> AsyncIterator[Action]:
    """Scroll the target into the pane, point at it first (the icons swap to a hover image
    that loads on first hover; a click before it has loaded misses), then click."""
    from cua.actions import Move

    if pane is not None:
        async for action in _into_pane(ctx, DomQuery(selector=selector, selector_type="xpath" if xpath else "css"),
                                       pane):
            yield action
    x, y = await _center(ctx, selector, xpath=xpath)
    yield Move(x=round(x), y=round(y))
    async for action in _act(ctx, [{"click": {"selector": selector, "xpath": xpath}}]):
        yield action


async def _posts_by(ctx: OracleContext, user: str) -> list[int]:
    names = [str(t).strip() for t in (await _dom(ctx, "#area .media .username", all=True) or [])]
    found = [i for i, name in enumerate(names) if name == user]
    if not found:
        raise OracleError(f"no post by {user!r}")
    return found


async def social_media(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    user, label = (await _bold(ctx, u))[:2]
    kind = SOCIAL_ACTIONS.get(label)
    if kind is None:
        raise OracleError(f"unknown action {label!r}")
    post = f'#area .media[data-result="{(await _posts_by(ctx, user))[0]}"]'
    if kind in ("reply", "retweet", "like"):
        async for action in _click_in_pane(ctx, f"{post} .{kind}"):
            yield action
        return
    for _ in range(3):  # the first click can land while the icon swaps to its hover image
        async for action in _click_in_pane(ctx, f"{post} .more"):
            yield action
        if await _dom(ctx, f"{post} ul", "visible"):
            break
    async for action in _click_in_pane(ctx, f"{post} ul li.{kind}"):
        yield action


async def social_media_all(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """Toggle the action on every post by the user (social-media-some: on the first N), then Submit."""
    bold = await _bold(ctx, u)
    label, user = bold[0], bold[-1]
    kind = SOCIAL_ACTIONS.get(label)
    if kind is None:
        raise OracleError(f"unknown action {label!r}")
    posts = await _posts_by(ctx, user)
    if len(bold) == 3:
        posts = posts[:int(bold[1])]
    for index in posts:
        async for action in _click_in_pane(ctx, f'#area .media[data-result="{index}"] .{kind}'):
            yield action
    async for action in _click_in_pane(ctx, "#submitRow button"):
        yield action


INTERACTIVE.update({"social-media": social_media, "social-media-all": social_media_all,
                    "social-media-some": social_media_all})


async def _press(ctx: OracleContext, key: str, times: int = 1) -> AsyncIterator[Action]:
    from cua.actions import Key

    for _ in range(times):
        yield Key(keys=[key])


async def _int_of(ctx: OracleContext, selector: str) -> int:
    text = str(await _dom(ctx, selector) or "").strip()
    if not re.fullmatch(r"-?\d+", text):
        raise OracleError(f"{selector} shows {text!r}, not a number")
    return int(text)


async def _slider_to(ctx: OracleContext, slider: str, shown: str, target: int) -> AsyncIterator[Action]:
    """Set a jQuery UI slider by keyboard, as a person can: focus its handle, find its
    ends with Home and End, page down (a fifth of the range a press), then arrow keys."""
    async for action in _act(ctx, [{"click": f"{slider} .ui-slider-handle"}]):
        yield action
    async for action in _press(ctx, "Home"):
        yield action
    low = await _int_of(ctx, shown)
    async for action in _press(ctx, "End"):
        yield action
    high = await _int_of(ctx, shown)
    if not low <= target <= high:
        raise OracleError(f"{target} is outside the slider's range {low}..{high}")
    page = max(1, (high - low) // 5)
    async for action in _press(ctx, "PageDown", (high - target) // page):
        yield action
    for _ in range(40):
        value = await _int_of(ctx, shown)
        if value == target:
            return
        async for action in _press(ctx, "ArrowRight" if value < target else "ArrowLeft"):
            yield action
    raise OracleError(f"the slider did not reach {target}")


async def use_slider(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    m = _asked(r"Select (-?\d+) with the slider", u)
    async for action in _slider_to(ctx, "#slider", "#val", int(m.group(1))):
        yield action
    async for action in _act(ctx, [_submit()]):
        yield action


async def use_slider_2(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    m = _asked(r"combination \[([-\d, ]+)\]", u)
    for i, value in enumerate(int(v) for v in m.group(1).split(",")):
        async for action in _slider_to(ctx, f"#slider-{i + 1}", f"#val-{i + 1}", value):
            yield action
    async for action in _act(ctx, [_submit()]):
        yield action


async def form_sequence(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    m = _asked(r"Select (-?\d+) with the slider, click the (\d)(st|nd|rd|th) checkbox", u)
    async for action in _slider_to(ctx, "#slider", "#val", int(m.group(1))):
        yield action
    async for action in _act(ctx, [{"click": f"#checkbox-{m.group(2)}"}, _submit()]):
        yield action


async def form_sequence_2(ctx: OracleContext, u: str) -> Steps:
    m = _asked(r"Check the (\d)(st|nd|rd|th) radio button and enter the number \"(-?\d+)\" into the (\d)", u)
    return [{"click": f'#area input[type=radio][value="{m.group(1)}"]'},
            {"fill": {"selector": f"#input-{m.group(4)}", "text": m.group(3)}}, _submit()]


async def form_sequence_3(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """A selectric dropdown: open it, scroll the item into its list (100 px tall), click it."""
    m = _asked(r"Choose (.+) from the dropdown, then click the button labeled \"(\w+)\"", u)
    items = "#dropdown-container .selectric-items li"
    async for action in _act(ctx, [{"click": "#dropdown-container .selectric"}, {"wait_for": items}]):
        yield action
    names = [str(t).strip() for t in (await _dom(ctx, items, all=True) or [])]
    if m.group(1) not in names:
        raise OracleError(f"no item {m.group(1)!r}")
    item = f"{items}:nth-child({names.index(m.group(1)) + 1})"
    async for action in _click_in_pane(ctx, item, "#dropdown-container .selectric-scroll"):
        yield action
    async for action in _act(ctx, [{"click": {"selector": "#buttons button", "text": m.group(2)}}]):
        yield action


async def click_scroll_list(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """Select the named options of a multiple-select list: click the first, ctrl+click the rest."""
    from cua.actions import KeyDown, KeyUp

    m = _asked(r"^Select (.*) from the scroll list and click Submit\.", u)
    options = [str(t).strip() for t in (await _dom(ctx, "#options option", all=True) or [])]
    wanted = [w.strip() for w in m.group(1).split(", ")]
    for n, name in enumerate(wanted):
        if name not in options:
            raise OracleError(f"no option {name!r}")
        target = DomQuery(selector=f"#options option:nth-child({options.index(name) + 1})")
        async for action in _into_pane(ctx, target, "#options"):
            yield action
        x, y = await _center(ctx, target.selector)
        if n:
            yield KeyDown(key="Control")
        yield Click(x=round(x), y=round(y))
        if n:
            yield KeyUp(key="Control")
    async for action in _act(ctx, [{"click": {"selector": "#area button", "text": "Submit"}}]):
        yield action


SOLVERS.update({"form-sequence-2": form_sequence_2})
INTERACTIVE.update({"use-slider": use_slider, "use-slider-2": use_slider_2, "form-sequence": form_sequence,
                    "click-scroll-list": click_scroll_list, "form-sequence-3": form_sequence_3})


MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


async def choose_date(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """Open the jQuery UI date picker, step months with Prev/Next until it shows the asked
    month, then click the day."""
    m = _asked(r"(\d{2})/(\d{2})/(\d{4})", u)
    month, day, year = int(m.group(1)), int(m.group(2)), int(m.group(3))
    async for action in _act(ctx, [{"click": "#datepicker"}, {"wait_for": "#ui-datepicker-div .ui-datepicker-title"}]):
        yield action
    for _ in range(14):
        shown_month = MONTHS.index(str(await _dom(ctx, "#ui-datepicker-div .ui-datepicker-month")).strip()) + 1
        shown_year = int(str(await _dom(ctx, "#ui-datepicker-div .ui-datepicker-year")).strip())
        delta = (year - shown_year) * 12 + month - shown_month
        if delta == 0:
            break
        async for action in _act(ctx, [{"click": "#ui-datepicker-div .ui-datepicker-" + ("next" if delta > 0 else "prev")}]):
            yield action
    else:
        raise OracleError("the date picker did not reach the month")
    async for action in _act(ctx, [{"click": {"selector": "#ui-datepicker-div td a.ui-state-default", "text": str(day)}},
                                   _submit()]):
        yield action


async def click_menu(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """Hover down the menu path (each submenu opens on hover), then click the leaf."""
    from cua.actions import Move

    m = _asked(r"^Select (.+)$", u)
    path = m.group(1).split(">")
    xpath = "//ul[@id='menu']"
    for depth, name in enumerate(path):
        xpath += f"/li[div[normalize-space()={_xpath_text(name)}]]"
        item = {"selector": f"{xpath}/div", "xpath": True}
        async for action in _act(ctx, [{"wait_for": item}]):
            yield action
        if depth < len(path) - 1:
            x, y = await _center(ctx, f"{xpath}/div", xpath=True)
            yield Move(x=round(x), y=round(y))
            xpath += "/ul"
        else:
            async for action in _act(ctx, [{"click": item}]):
                yield action


async def terminal(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """List the files with `ls`, then `rm` one with the asked extension (or none)."""
    from cua.actions import Type

    m = re.search(r"extension \.(\S+)$", u)
    async for action in _act(ctx, [{"click": "#terminal"}]):
        yield action
    yield Type(text="ls")
    async for action in _press(ctx, "Enter"):
        yield action
    outputs = [str(t).strip() for t in (await _dom(ctx, "#terminal .terminal-output .output", all=True) or [])]
    files = outputs[-1].split() if outputs else []
    pick = next((f for f in files if (f.endswith("." + m.group(1)) if m else "." not in f)), None)
    if pick is None:
        raise OracleError(f"no file fits {u!r} among {files}")
    yield Type(text=f"rm {pick}")
    async for action in _press(ctx, "Enter"):
        yield action


INTERACTIVE.update({"choose-date": choose_date, "choose-date-easy": choose_date, "choose-date-medium": choose_date,
                    "choose-date-nodelay": choose_date, "click-menu": click_menu, "terminal": terminal})


async def visual_addition(ctx: OracleContext, u: str) -> Steps:
    total = 0
    for i in (1, 2):
        total += int(await _dom(ctx, f"#visual-{i} .addition-block", "count") or 0)
    return [{"fill": {"selector": "#math-answer", "text": str(total)}}, _submit()]


async def click_menu_2(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """Open the menu; the item is named, or shown by its icon (found by the icon's class)."""
    from cua.actions import Move

    named = _quoted(u)
    if len(named) > 1:
        label = named[1]
    else:
        icon = str(await _dom(ctx, "#query .ui-icon", "attr", attr="class") or "")
        kind = next((c for c in icon.split() if c.startswith("ui-icon-")), None)
        if kind is None:
            raise OracleError(f"unexpected request: {u!r}")
        label = str(await _dom(ctx, f"//ul[@id='menu']//span[contains(@class, '{kind}')]/parent::div", xpath=True) or "").strip()
    async for action in _act(ctx, [{"click": "#open-menu"}, {"wait_for": "#menu"}]):
        yield action
    item = f"//ul[@id='menu']//li[not(.//ul)]/div[normalize-space()={_xpath_text(label)}]"
    parent = f"{item}/ancestor::li[.//ul][1]/div"
    if await _dom(ctx, parent, "count", xpath=True):
        x, y = await _center(ctx, parent, xpath=True)
        yield Move(x=round(x), y=round(y))
    async for action in _act(ctx, [{"wait_for": {"selector": item, "xpath": True}},
                                   {"click": {"selector": item, "xpath": True}}]):
        yield action


async def phone_book(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """Page through the contacts until the person's card, then click the asked property."""
    m = _asked(r"^Find (.+) in the contact book and click on their (phone|email|address)", u)
    for _ in range(6):
        if str(await _dom(ctx, "#contact .name") or "").strip() == m.group(1):
            # A long address wraps: the box's centre can fall between its lines, but the
            # start of its last line is always on the link.
            box = await _dom(ctx, f"#contact a.{m.group(2)}", "bbox")
            if not box:
                raise OracleError(f"the card has no {m.group(2)}")
            yield Click(x=round(box["x"] + 3), y=round(box["y"] + box["height"] - 4))
            return
        async for action in _act(ctx, [{"click": {"selector": "#pagination a", "text": ">"}}]):
            yield action
    raise OracleError(f"no contact named {m.group(1)!r}")


SOLVERS.update({"visual-addition": visual_addition})
INTERACTIVE.update({"click-menu-2": click_menu_2, "phone-book": phone_book, "click-test-transfer": click_test_transfer})


async def buy_ticket(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    want = " ".join(await _bold(ctx, u))
    prices = [int(p) for p in await _dom(ctx, "#area .flight .buy-ticket", "attr", all=True, attr="data-price") or []]
    durations = [int(d) for d in await _dom(ctx, "#area .flight .time-duration", "attr", all=True,
                                            attr="data-duration") or []]
    pick = {"cheapest cost": lambda: prices.index(min(prices)), "most expensive cost": lambda: prices.index(max(prices)),
            "shortest duration": lambda: durations.index(min(durations)),
            "longest duration": lambda: durations.index(max(durations))}.get(want)
    if pick is None or not prices:
        raise OracleError(f"unexpected request: {u!r}")
    flight = f"(//div[@id='area']//div[contains(concat(' ', normalize-space(@class), ' '), ' flight ')])[{pick() + 1}]"
    async for action in _click_in_pane(ctx, f"{flight}//button[contains(@class, 'buy-ticket')]", xpath=True):
        yield action


_FOOD = "(//div[@id='area']//div[contains(@class, 'food-item')])"


async def order_food(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """Add one of each named item, or N of one item of the named type, then order."""
    names = [str(n).strip() for n in await _dom(ctx, "#area .food-item .item-name", all=True) or []]
    by_name = re.match(r"Order one of each item: (.+)$", u)
    by_type = re.match(r"Order (\d+) items that are (.+)$", u)
    adds: list[int] = []
    if by_name:
        for name in (n.strip() for n in by_name.group(1).split(",")):
            if name not in names:
                raise OracleError(f"no menu item {name!r}")
            adds.append(names.index(name))
    elif by_type:
        kind = by_type.group(2).strip()
        for i in range(len(names)):
            types = await _dom(ctx, f"{_FOOD}[{i + 1}]//div[contains(@class, 'types')]/img", "attr", all=True,
                               attr="alt", xpath=True)
            if kind in [str(t) for t in types or []]:
                adds = [i] * int(by_type.group(1))
                break
        else:
            raise OracleError(f"no item is {kind!r}")
    else:
        raise OracleError(f"unexpected request: {u!r}")
    for i in adds:
        async for action in _click_in_pane(ctx, f"{_FOOD}[{i + 1}]//span[contains(@class, 'add')]", xpath=True):
            yield action
    async for action in _click_in_pane(ctx, "#submit-order button"):
        yield action


INTERACTIVE.update({"buy-ticket": buy_ticket, "order-food": order_food})


async def multi_layouts(ctx: OracleContext, u: str) -> Steps:
    """The form comes in one of several layouts: find each input by the row that names it."""
    genre, director, year = [str(t).strip() for t in (await _dom(ctx, "#query b", all=True) or [])][:3]
    rows = "//div[@id='area']//*[self::p or self::tr or " + " or ".join(
        f"contains(concat(' ', normalize-space(@class), ' '), ' {c} ')" for c in ("row", "field", "ui-entry")) + "]"

    def field(labels: tuple[str, ...], text: str) -> dict[str, Any]:
        named = " or ".join(f"contains(normalize-space(.), '{label}')" for label in labels)
        return {"fill": {"selector": {"selector": f"{rows}[{named}]//input", "xpath": True}, "text": text}}

    return [field(("Genre",), genre), field(("Director",), director), field(("Year", "Released"), year),
            {"click": {"selector": "//div[@id='area']//*[self::button or contains(@class, 'ui-submit')"
                                   " or contains(@class, 'final')]", "xpath": True}}]


SOLVERS.update({"multi-layouts": multi_layouts})


SHAPE_COLORS = ("red", "green", "blue", "aqua", "black", "magenta", "yellow")


async def _shapes(ctx: OracleContext) -> list[dict[str, Any]]:
    """Every shape, letter and digit drawn in #area_svg, described as MiniWoB describes them."""
    out: list[dict[str, Any]] = []
    for tag, kind in (("text", None), ("rect", "rectangle"), ("circle", "circle"), ("polygon", "triangle")):
        fills = await _dom(ctx, f"#area_svg {tag}", "attr", all=True, attr="fill") or []
        boxes = await _dom(ctx, f"#area_svg {tag}", "bbox", all=True) or []
        if tag == "text":
            texts = await _dom(ctx, "#area_svg text", all=True) or []
            sizes = await _dom(ctx, "#area_svg text", "attr", all=True, attr="font-size") or []
        else:
            texts, sizes = [None] * len(fills), [f"{b['width']}px" for b in boxes]
        for i, (fill, text, size) in enumerate(zip(fills, texts, sizes)):
            large = float(str(size).rstrip("px") or 0) > 15
            shown = str(text).strip() if kind is None else kind
            out.append({"selector": f"#area_svg {tag}:nth-of-type({i + 1})", "size": "large" if large else "small",
                        "color": fill, "text": shown,
                        "type": "shape" if kind else ("digit" if shown.isdigit() else "letter")})
    return out


def _matches(shape: dict[str, Any], words: list[str]) -> bool:
    """MiniWoB's shapes.shapeMatchesText for a description such as "large red circle"."""
    words = list(words)
    size = words.pop(0) if words and words[0] in ("large", "small") else ""
    color = words.pop(0) if words and words[0] in SHAPE_COLORS else ""
    what = " ".join(words) or "item"
    return ((not size or shape["size"] == size) and (not color or shape["color"] == color)
            and (what == "item" or what in (shape["text"], shape["type"])))


async def click_shape(ctx: OracleContext, u: str) -> Steps:
    m = _asked(r"^Click on an? (.+)$", u)
    for shape in await _shapes(ctx):
        if _matches(shape, m.group(1).split()):
            return [{"click": shape["selector"]}]
    raise OracleError(f"no shape fits {m.group(1)!r}")


async def count_shape(ctx: OracleContext, u: str) -> Steps:
    m = _asked(r"^How many (.+)s are there\?", u)
    n = sum(1 for shape in await _shapes(ctx) if _matches(shape, m.group(1).split()))
    return [{"click": {"selector": "#count-buttons button", "text": str(n)}}]


async def ascending_numbers(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """Click 1; the numbers then hide under squares (numbered in data-index): click 2, 3, ..."""
    async for action in _act(ctx, [{"click": {"selector": "#area_svg text", "text": "1"}}, {"wait_for": "#area_svg rect"}]):
        yield action
    indexes = sorted(int(str(i)) for i in await _dom(ctx, "#area_svg rect", "attr", all=True, attr="data-index") or [])
    for index in indexes:
        async for action in _act(ctx, [{"click": f'#area_svg rect[data-index="{index}"]'}]):
            yield action


SOLVERS.update({"click-shape": click_shape, "count-shape": count_shape})
INTERACTIVE.update({"ascending-numbers": ascending_numbers})


async def highlight_text(ctx: OracleContext, u: str) -> Steps:
    """A triple click selects a whole paragraph (highlight-text-2: the n-th one)."""
    m = re.search(r"(\d)(st|nd|rd|th) paragraph", u)
    target = f"#randomText p:nth-of-type({m.group(1)})" if m else "#randomText"
    return [{"click": target, "count": 3}, _submit()]


SOLVERS.update({"highlight-text": highlight_text, "highlight-text-2": highlight_text})


async def _drag_item(ctx: OracleContext, items: str, src: int, dst: int) -> AsyncIterator[Action]:
    """Drag the src-th item of a jQuery UI sortable list onto the dst-th place (0-based):
    past the target's middle, so that sortable moves it there."""
    from cua.actions import Drag, Point

    boxes = await _dom(ctx, items, "bbox", all=True) or []
    if not (0 <= src < len(boxes) and 0 <= dst < len(boxes)):
        raise OracleError(f"no item {src} or {dst} in {items}")
    a, b = boxes[src], boxes[dst]
    ax, ay = a["x"] + a["width"] / 2, a["y"] + a["height"] / 2
    by = b["y"] + b["height"] * (0.8 if dst > src else 0.2)
    yield Drag(path=[Point(x=round(ax), y=round(ay + (by - ay) * t / 10)) for t in range(11)])


async def drag_items(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    m = re.match(r"Drag (.+?) (to the top|to the bottom|down by one position|up by one position|"
                 r"to the (\d)(st|nd|rd|th) position)\.", u)
    if not m:
        raise OracleError(f"unexpected request: {u!r}")
    names = [str(t).strip() for t in await _dom(ctx, "#sortable li div", all=True) or []]
    if m.group(1) not in names:
        raise OracleError(f"no item {m.group(1)!r}")
    src = names.index(m.group(1))
    where = m.group(2)
    dst = (0 if where == "to the top" else len(names) - 1 if where == "to the bottom" else
           src + 1 if where.startswith("down") else src - 1 if where.startswith("up") else int(m.group(3)) - 1)
    async for action in _drag_item(ctx, "#sortable li", src, dst):
        yield action


async def drag_sort_numbers(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """Selection sort by drags: bring the smallest of the rest to each place in turn."""
    for place in range(8):
        numbers = [int(str(t).strip()) for t in await _dom(ctx, "#sortable li div", all=True) or []]
        if place >= len(numbers) - 1:
            break
        rest = numbers[place:]
        src = place + rest.index(min(rest))
        if src != place:
            async for action in _drag_item(ctx, "#sortable li", src, place):
                yield action
    numbers = [int(str(t).strip()) for t in await _dom(ctx, "#sortable li div", all=True) or []]
    if numbers != sorted(numbers):
        raise OracleError(f"the list is not sorted: {numbers}")
    async for action in _act(ctx, [_submit()]):
        yield action


INTERACTIVE.update({"drag-items": drag_items, "drag-sort-numbers": drag_sort_numbers})


def _drag_path(x0: float, y0: float, x1: float, y1: float, n: int = 10) -> Action:
    from cua.actions import Drag, Point

    return Drag(path=[Point(x=round(x0 + (x1 - x0) * t / n), y=round(y0 + (y1 - y0) * t / n)) for t in range(n + 1)])


async def drag_items_grid(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    places = {"top left": 0, "top center": 1, "top right": 2, "center left": 3, "center": 4, "center right": 5,
              "bottom left": 6, "bottom center": 7, "bottom right": 8}
    m = _asked(r"^Drag (.+?) (?:to the (.+)|(up|down|left|right) by one)\.$", u)
    names = [str(t).strip() for t in await _dom(ctx, "#sortable li div", all=True) or []]
    if m.group(1) not in names:
        raise OracleError(f"no item {m.group(1)!r}")
    src = names.index(m.group(1))
    if m.group(2):
        dst = places[m.group(2)]
    else:
        dst = src + {"up": -3, "down": 3, "left": -1, "right": 1}[m.group(3)]
    boxes = await _dom(ctx, "#sortable li", "bbox", all=True) or []
    a, b = boxes[src], boxes[dst]
    # Past the target's middle, on the side away from where the item comes from.
    fx = 0.5 if dst % 3 == src % 3 else (0.8 if dst % 3 > src % 3 else 0.2)
    fy = 0.5 if dst // 3 == src // 3 else (0.8 if dst // 3 > src // 3 else 0.2)
    yield _drag_path(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2,
                     b["x"] + b["width"] * fx, b["y"] + b["height"] * fy)


async def drag_box(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """Drag the small box's centre onto the large box's centre (then it lies inside it)."""
    (x0, y0), (x1, y1) = await _center(ctx, "#draggableSmall"), await _center(ctx, "#draggableLarge")
    yield _drag_path(x0, y0, x1, y1)
    async for action in _act(ctx, [_submit()]):
        yield action


async def drag_direction(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """drag-single-shape and drag-circle: drag the one shape 30 px the asked way."""
    m = _asked(r"Drag the (?:item|circle) (left|right|up|down)", u)
    shape = "#area svg .black-shape, #area svg circle"
    x, y = await _center(ctx, shape)
    dx, dy = {"left": (-30, 0), "right": (30, 0), "up": (0, -30), "down": (0, 30)}[m.group(1)]
    yield _drag_path(x, y, x + dx, y + dy)
    async for action in _act(ctx, [_submit()]):
        yield action


INTERACTIVE.update({"drag-items-grid": drag_items_grid, "drag-box": drag_box, "drag-single-shape": drag_direction,
                    "drag-circle": drag_direction})


async def drag_shapes(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """Drag every shape of the asked kind into the black box."""
    m = _asked(r"Drag all (rectangles|circles|triangles) into the black box", u)
    tag = {"rectangles": "rect:not(#shape-container)", "circles": "circle", "triangles": "polygon"}[m.group(1)]
    box = await _dom(ctx, "#shape-container", "bbox")
    if not box:
        raise OracleError("no black box on the page")
    count = int(await _dom(ctx, f"#area_svg {tag}", "count") or 0)
    for i in range(count):
        shapes = await _dom(ctx, f"#area_svg {tag}", "bbox", all=True) or []
        s = shapes[i]
        tx = box["x"] + box["width"] * (0.3 + 0.4 * ((i % 3) / 2))
        ty = box["y"] + box["height"] * (0.3 + 0.4 * (i // 3 % 2))
        yield _drag_path(s["x"] + s["width"] / 2, s["y"] + s["height"] / 2, tx, ty, 6)
    async for action in _act(ctx, [_submit()]):
        yield action


INTERACTIVE.update({"drag-shapes": drag_shapes})


async def email_inbox_forward_nl(ctx: OracleContext, u: str) -> AsyncIterator[Action]:
    """The request names two senders of the inbox in free wording: the one forwarded to is
    the one after "to", or right after the verb ("Forward Ann the email from Bo"), or else
    the one that is not the sender ("from Bo", "by Bo", "Bo sent", "Bo's")."""
    senders = {str(t).strip() for t in await _dom(ctx, "#main .email-thread .email-sender", all=True) or []}
    named = [s for s in senders if re.search(rf"\b{re.escape(s)}\b", u)]
    if len(named) != 2:
        raise OracleError(f"cannot tell the two people in {u!r}")

    def is_dest(name: str) -> bool:
        n = re.escape(name)
        return bool(re.search(rf"\bto {n}\b", u) or re.search(rf"^(?:Forward|Send) {n}\b", u))

    def is_source(name: str) -> bool:
        n = re.escape(name)
        return bool(re.search(rf"\b(?:from|by) {n}\b", u) or re.search(rf"\b{n}(?: sent|'s)\b", u))

    dests = [n for n in named if is_dest(n)]
    if len(dests) != 1:
        dests = [n for n in named if not is_source(n)]
    if len(dests) != 1:
        raise OracleError(f"cannot tell who to forward to in {u!r}")
    dest, source = dests[0], next(n for n in named if n != dests[0])
    thread = _email_thread(source)
    async for action in _into_pane(ctx, DomQuery(selector=thread, selector_type="xpath"), "#main"):
        yield action
    steps: Steps = [{"click": {"selector": f"{thread}//*[contains(@class, 'email-sender')]", "xpath": True}},
                    {"wait_for": "#email"}, {"click": "#email .email-forward"},
                    {"fill": {"selector": "#forward .forward-sender", "text": dest}}, {"click": "#send-forward"}]
    async for action in _act(ctx, steps):
        yield action


INTERACTIVE.update({"email-inbox-forward-nl": email_inbox_forward_nl})


async def click_shades(ctx: OracleContext, u: str) -> Steps:
    """Each swatch names its colour family in data-color: click those of the asked one."""
    color = next((c for c in ("red", "green", "blue") if re.search(rf"\b{c}\b", u)), None)
    if color is None:
        raise OracleError(f"unexpected request: {u!r}")
    count = int(await _dom(ctx, f'#area span[data-color="{color}"]', "count") or 0)
    steps: Steps = [{"click": {"selector": f'#area span[data-color="{color}"]', "index": i}} for i in range(count)]
    return [*steps, {"click": "#area #submit"}]


SOLVERS.update({"click-shades": click_shades})
