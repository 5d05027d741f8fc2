"""Murmur's icons: inline SVG (24 px grid, stroked in currentColor), so a theme recolours
them and no icon font or file is fetched."""

from __future__ import annotations

import html

__all__ = ["icon"]

_PATHS = {
    "reply": '<path d="M4 5h16v11H9l-5 4z"/>',
    "repost": '<path d="M4 9V7h13l-3-3M20 15v2H7l3 3"/>',
    "like": '<path d="M12 20s-7-4.4-7-10a4 4 0 0 1 7-2.6A4 4 0 0 1 19 10c0 5.6-7 10-7 10z"/>',
    "bookmark": '<path d="M6 3h12v18l-6-4-6 4z"/>',
    "quote": '<path d="M5 11h4v6H5zM5 11c0-3 1-5 4-6M14 11h4v6h-4zM14 11c0-3 1-5 4-6"/>',
    "delete": '<path d="M5 7h14M10 7V4h4v3M7 7l1 13h8l1-13"/>',
    "image": '<rect x="3" y="5" width="18" height="14" rx="2"/><circle cx="9" cy="10" r="2"/><path d="M3 17l5-5 4 4 3-3 6 6"/>',
    "poll": '<path d="M5 20V10M12 20V4M19 20v-7"/>',
    "verified": '<path d="M12 2l2.4 2.2 3.2-.4.8 3.1 2.8 1.6-1.3 3 1.3 3-2.8 1.6-.8 3.1-3.2-.4L12 22l-2.4-2.2-3.2.4-.8-3.1L2.8 15.5l1.3-3-1.3-3 2.8-1.6.8-3.1 3.2.4z"/><path d="M8.5 12l2.5 2.5 4.5-5"/>',
    "location": '<path d="M12 21s-6-6.2-6-11a6 6 0 0 1 12 0c0 4.8-6 11-6 11z"/><circle cx="12" cy="10" r="2"/>',
    "link": '<path d="M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1"/>',
    "calendar": '<rect x="4" y="5" width="16" height="15" rx="2"/><path d="M4 10h16M9 3v4M15 3v4"/>',
    "follow": '<circle cx="10" cy="8" r="4"/><path d="M3 20c0-4 3-6 7-6s7 2 7 6M19 8v6M16 11h6"/>',
    "mention": '<circle cx="12" cy="12" r="4"/><path d="M16 12v1.5a2.5 2.5 0 0 0 5 0V12a9 9 0 1 0-3.5 7.1"/>',
    "mute": '<path d="M4 9h4l5-4v14l-5-4H4zM17 9l4 6M21 9l-4 6"/>',
    "block": '<circle cx="12" cy="12" r="8"/><path d="M6.5 6.5l11 11"/>',
    "send": '<path d="M3 11l18-8-8 18-2-8z"/>',
    "hash": '<path d="M9 4L7 20M17 4l-2 16M4 9h16M3 15h16"/>',
    "list": '<path d="M8 6h12M8 12h12M8 18h12M4 6h.01M4 12h.01M4 18h.01"/>',
}


def icon(name: str, label: str = "") -> str:
    """The icon `name` as inline SVG: decorative (aria-hidden) without `label`, an image named `label` with one."""
    a11y = f'role="img" aria-label="{html.escape(label, quote=True)}"' if label else 'aria-hidden="true"'
    return (f'<svg class="ic ic-{name}" viewBox="0 0 24 24" width="18" height="18" fill="none" stroke="currentColor" '
            f'stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round" {a11y} focusable="false">{_PATHS[name]}</svg>')
