"""Key names: cua's canonical names (DOM spelling) and characters, mapped to X keysyms.

Standard library only; shared by the XTest and the xdotool input backends.
"""

from __future__ import annotations

__all__ = ["KEYSYM_NAMES", "MODIFIERS", "char_keysym", "key_keysym_name", "keysym_for"]

#: Canonical key name -> X keysym name.
KEYSYM_NAMES: dict[str, str] = {
    "Enter": "Return", "Tab": "Tab", "Escape": "Escape", "Backspace": "BackSpace",
    "Delete": "Delete", "Insert": "Insert", "Space": "space",
    "ArrowUp": "Up", "ArrowDown": "Down", "ArrowLeft": "Left", "ArrowRight": "Right",
    "Home": "Home", "End": "End", "PageUp": "Prior", "PageDown": "Next",
    "Shift": "Shift_L", "Control": "Control_L", "Alt": "Alt_L", "Meta": "Super_L",
    "CapsLock": "Caps_Lock",
    **{f"F{i}": f"F{i}" for i in range(1, 13)},
}

#: Aliases the host may still send (it normalises, but the agent may be driven directly).
_ALIASES: dict[str, str] = {
    "return": "Enter", "esc": "Escape", "ctrl": "Control", "control": "Control", "alt": "Alt",
    "shift": "Shift", "super": "Meta", "cmd": "Meta", "meta": "Meta", "win": "Meta",
    "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight",
    "pageup": "PageUp", "pagedown": "PageDown", "backspace": "Backspace", "delete": "Delete",
    "enter": "Enter", "tab": "Tab", "space": "Space", "escape": "Escape", "home": "Home", "end": "End",
    "insert": "Insert", "capslock": "CapsLock",
}

MODIFIERS = frozenset({"Shift", "Control", "Alt", "Meta"})

#: Printable ASCII punctuation -> keysym name (xdotool wants names, not characters).
_PUNCT: dict[str, str] = {
    " ": "space", "!": "exclam", '"': "quotedbl", "#": "numbersign", "$": "dollar", "%": "percent",
    "&": "ampersand", "'": "apostrophe", "(": "parenleft", ")": "parenright", "*": "asterisk",
    "+": "plus", ",": "comma", "-": "minus", ".": "period", "/": "slash", ":": "colon",
    ";": "semicolon", "<": "less", "=": "equal", ">": "greater", "?": "question", "@": "at",
    "[": "bracketleft", "\\": "backslash", "]": "bracketright", "^": "asciicircum", "_": "underscore",
    "`": "grave", "{": "braceleft", "|": "bar", "}": "braceright", "~": "asciitilde",
    "\n": "Return", "\t": "Tab",
}


def canonical(name: str) -> str:
    if name in KEYSYM_NAMES or len(name) == 1:
        return name
    alias = _ALIASES.get(name.lower())
    if alias is None:
        if name.upper() in KEYSYM_NAMES:  # f5 -> F5
            return name.upper()
        raise ValueError(f"unknown key name {name!r}")
    return alias


def key_keysym_name(name: str) -> str:
    """The X keysym name for a key (canonical name or single character)."""
    name = canonical(name)
    if name in KEYSYM_NAMES:
        return KEYSYM_NAMES[name]
    if name in _PUNCT:
        return _PUNCT[name]
    if name.isascii() and name.isalnum():
        return name
    return f"U{ord(name):04X}"


def char_keysym(char: str) -> int:
    """The keysym value of a character (X11 maps Latin-1 directly, the rest to 0x01000000+cp)."""
    if char == "\n":
        return 0xFF0D
    if char == "\t":
        return 0xFF09
    code = ord(char)
    if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF:
        return code
    return 0x01000000 + code


def keysym_for(name: str, string_to_keysym) -> int:  # type: ignore[no-untyped-def]
    """The keysym value of a key, given Xlib's XK.string_to_keysym."""
    name = canonical(name)
    if len(name) == 1:
        return char_keysym(name)
    value = string_to_keysym(KEYSYM_NAMES[name])
    if not value:
        raise ValueError(f"no keysym for {name!r}")
    return int(value)
