"""The imported MiniWoB++ tasks: name -> what the task asks, in one line.

The agent reads the exact request (MiniWoB's utterance, e.g. 'Click on the "ok"
button.') at the top of the page, as in MiniWoB++; the suite's instruction names the
task and points there, because an instruction is fixed when a variant is instantiated,
before the page has generated its problem.

`WITH_ORACLE` are the tasks with a scripted solution in `oracles`; only those are
templates in the `miniwob` suite today (the task format has no "no oracle" mark yet:
every template must pass `cua tasks check`). `OTHER` are further common MiniWoB++
tasks, ready to be added as templates once the format can mark them.
"""

from __future__ import annotations

WITH_ORACLE: dict[str, str] = {
    "click-button": "click the button the request names",
    "click-button-sequence": "click the buttons in the order asked",
    "click-checkboxes": "tick exactly the checkboxes asked for, then submit",
    "click-checkboxes-large": "tick exactly the checkboxes asked for among many, then submit",
    "click-collapsible": "expand the collapsed section, then submit",
    "click-dialog": "close the dialog with its x button",
    "click-dialog-2": "click the dialog button the request names",
    "click-link": "click the link the request names",
    "click-option": "choose the radio option asked for, then submit",
    "click-tab": "click the tab the request names",
    "click-tab-2": "switch tabs to find the named link and click it",
    "click-test": "click the button",
    "click-test-2": "click the button the request names",
    "click-widget": "click a widget of the kind asked for",
    "choose-list": "choose the item asked for in the list, then submit",
    "copy-paste": "copy the text of the text area into the text box, then submit",
    "enter-date": "enter the date asked for, then submit",
    "enter-password": "type the password into both fields, then submit",
    "enter-text": "type the text asked for, then submit",
    "enter-text-2": "type the text in the case asked for, then submit",
    "enter-time": "enter the time asked for, then submit",
    "find-word": "type the word at the position asked for, then submit",
    "focus-text": "focus the text box",
    "focus-text-2": "focus the text box asked for",
    "login-user": "log in with the username and password given",
    "read-table": "type the value the table shows for the key asked for, then submit",
    "simple-arithmetic": "solve the arithmetic problem, then submit",
    "enter-text-dynamic": "type the text asked for, then submit",
    "use-autocomplete": "enter an item the autocomplete offers that matches the request",
    "use-spinner": "set the spinner to the value asked for, then submit",
    "grid-coordinate": "click the grid coordinate asked for",
    "click-color": "click the color asked for",
    "click-collapsible-2": "expand sections to find the named link and click it",
    "login-user-popup": "log in, dismissing the popup if it appears",
    "multi-orderings": "fill in the form whatever its field order, then submit",
    "navigate-tree": "open folders to find the named file and click it",
    "guess-number": "guess the number with the hints given",
    "click-checkboxes-transfer": "tick the checkboxes asked for, then submit",
    "search-engine": "search and click the result asked for",
}

OTHER: dict[str, str] = {
    "book-flight": "book the flight that matches the request",
    "choose-date": "pick the date asked for in the date picker, then submit",
    "click-checkboxes-soft": "tick the words similar to those asked for, then submit",
    "click-menu": "select the menu item asked for",
    "click-menu-2": "select the menu item asked for",
    "click-pie": "expand the pie menu and click the item asked for",
    "click-scroll-list": "select the items asked for in the scroll list, then submit",
    "click-shades": "click all the shades of the color asked for, then submit",
    "click-shape": "click the shape asked for",
    "count-shape": "count the shapes asked for and answer",
    "email-inbox": "do the email action asked for in the inbox",
    "identify-shape": "click the button naming the shape shown",
    "multi-layouts": "fill in the form whatever its layout, then submit",
    "social-media": "do the action asked for on the named post",
    "social-media-all": "do the action asked for on every matching post",
    "social-media-some": "do the action asked for on the given number of posts",
    "tic-tac-toe": "win the game of tic-tac-toe",
    "use-slider": "set the slider to the value asked for, then submit",
}
