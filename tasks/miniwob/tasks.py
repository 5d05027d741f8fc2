"""The imported MiniWoB++ tasks: every task the `miniwob` package registers as a
Gymnasium environment (`miniwob/<task>-v1`), all of which run offline.

The agent's instruction is MiniWoB's utterance (e.g. 'Click on the "ok" button.'),
read from the page after reset (`TaskSetup.instruction_query`); `WHAT` says in one
line what a task asks, for the fallback instruction shown when the utterance cannot
be read. Which tasks have a scripted solution is `oracles.solvers()`.
"""

from __future__ import annotations

import inspect


def shipped_tasks() -> list[str]:
    """The task names (subdomains) of every MiniWoB environment the package defines."""
    from miniwob.environment import MiniWoBEnvironment
    from miniwob.envs import miniwob_envs

    names: set[str] = set()
    for _, cls in inspect.getmembers(miniwob_envs, inspect.isclass):
        subdomain = getattr(cls, "subdomain", None) if issubclass(cls, MiniWoBEnvironment) else None
        if subdomain:
            names.add(str(subdomain))
    return sorted(names)


WHAT: dict[str, str] = {
    "click-button": "click the button the request names",
    "click-button-sequence": "click the buttons in the order asked",
    "click-checkboxes": "tick exactly the checkboxes asked for, then submit",
    "click-checkboxes-large": "tick exactly the checkboxes asked for among many, then submit",
    "click-checkboxes-soft": "tick the words similar to those asked for, then submit",
    "click-checkboxes-transfer": "tick the checkboxes asked for, then submit",
    "click-collapsible": "expand the collapsed section, then submit",
    "click-collapsible-2": "expand sections to find the named link and click it",
    "click-color": "click the color asked for",
    "click-dialog": "close the dialog with its x button",
    "click-dialog-2": "click the dialog button the request names",
    "click-link": "click the link the request names",
    "click-menu": "select the menu item asked for",
    "click-menu-2": "select the menu item asked for",
    "click-option": "choose the radio option asked for, then submit",
    "click-pie": "expand the pie menu and click the item asked for",
    "click-scroll-list": "select the items asked for in the scroll list, then submit",
    "click-shades": "click all the shades of the color asked for, then submit",
    "click-shape": "click the shape asked for",
    "click-tab": "click the tab the request names",
    "click-tab-2": "switch tabs to find the named link and click it",
    "click-test": "click the button",
    "click-test-2": "click the button the request names",
    "click-widget": "click a widget of the kind asked for",
    "choose-date": "pick the date asked for in the date picker, then submit",
    "choose-list": "choose the item asked for in the list, then submit",
    "book-flight": "book the flight that matches the request",
    "copy-paste": "copy the text of the text area into the text box, then submit",
    "count-shape": "count the shapes asked for and answer",
    "email-inbox": "do the email action asked for in the inbox",
    "enter-date": "enter the date asked for, then submit",
    "enter-password": "type the password into both fields, then submit",
    "enter-text": "type the text asked for, then submit",
    "enter-text-2": "type the text in the case asked for, then submit",
    "enter-text-dynamic": "type the text asked for, then submit",
    "enter-time": "enter the time asked for, then submit",
    "find-word": "type the word at the position asked for, then submit",
    "focus-text": "focus the text box",
    "focus-text-2": "focus the text box asked for",
    "grid-coordinate": "click the grid coordinate asked for",
    "guess-number": "guess the number with the hints given",
    "identify-shape": "click the button naming the shape shown",
    "login-user": "log in with the username and password given",
    "login-user-popup": "log in, dismissing the popup if it appears",
    "multi-layouts": "fill in the form whatever its layout, then submit",
    "multi-orderings": "fill in the form whatever its field order, then submit",
    "navigate-tree": "open folders to find the named file and click it",
    "read-table": "type the value the table shows for the key asked for, then submit",
    "search-engine": "search and click the result asked for",
    "simple-arithmetic": "solve the arithmetic problem, then submit",
    "social-media": "do the action asked for on the named post",
    "social-media-all": "do the action asked for on every matching post",
    "social-media-some": "do the action asked for on the given number of posts",
    "tic-tac-toe": "win the game of tic-tac-toe",
    "use-autocomplete": "enter an item the autocomplete offers that matches the request",
    "use-slider": "set the slider to the value asked for, then submit",
    "use-spinner": "set the spinner to the value asked for, then submit",
}
