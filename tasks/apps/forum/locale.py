"""The forum's UI in German (de-DE), and how it writes its dates and counts per locale.

The shared catalogue (`cua.tasks.apps.i18n`) holds the words every app shares; this one
the forum's own. Posts, comments, member names and tags are data: never translated.
"""

from __future__ import annotations

import datetime as dt

from cua.tasks.apps.i18n import format_number

__all__ = ["DE", "count", "when"]

DE: dict[str, str] = {
    "Latest": "Neueste", "Top": "Top", "New post": "Neuer Beitrag", "Signed in as": "Angemeldet als",
    "Tags": "Schlagwörter", "Upvote": "Positiv bewerten", "Downvote": "Negativ bewerten", "Score": "Punkte",
    "by": "von", "No such tag.": "Kein solches Schlagwort.", "Top posts": "Top-Beiträge",
    "Latest posts": "Neueste Beiträge", "Newest": "Neueste", "Loading more…": "Weitere werden geladen…",
    "You have reached the end.": "Sie haben das Ende erreicht.", "No such post.": "Kein solcher Beitrag.",
    "Reply": "Antworten", "Reply to": "Antwort an", "Add a comment": "Kommentar schreiben", "Comment": "Kommentieren",
    "Delete comment": "Kommentar löschen",
    "Delete your comment? Replies to it are deleted too.":
        "Ihren Kommentar löschen? Antworten darauf werden ebenfalls gelöscht.",
    "Give your post a title of at least 5 characters.": "Geben Sie Ihrem Beitrag einen Titel mit mindestens 5 Zeichen.",
    "Choose a tag.": "Wählen Sie ein Schlagwort.", "Write something in the body.": "Schreiben Sie etwas in den Text.",
    "Tag": "Schlagwort", "Choose a tag…": "Schlagwort wählen…", "Body": "Text", "Publish": "Veröffentlichen",
    "Search posts": "Beiträge suchen", "No such member.": "Kein solches Mitglied.", "Joined": "Dabei seit",
    "post karma": "Beitrags-Karma", "Posts": "Beiträge", "No posts yet.": "Noch keine Beiträge.",
    "comment": "Kommentar", "comments": "Kommentare", "post": "Beitrag", "posts": "Beiträge",
    "result(s) for": "Treffer für", "Search": "Suchen", "Cancel": "Abbrechen", "Delete": "Löschen",
    "Not found": "Nicht gefunden", "Title": "Titel", "Feed": "Beiträge", "Community": "Community",
}


def when(iso: str, locale: str) -> str:
    """A post's or comment's time: `2026-03-02 14:05` in en-US (as the tasks were written
    against), `02.03.2026, 14:05` in de-DE; a date alone likewise."""
    if locale != "de-DE":
        return iso.replace("T", " ")
    try:
        moment = dt.datetime.fromisoformat(iso)
    except ValueError:
        return iso.replace("T", " ")
    if "T" not in iso and " " not in iso:
        return moment.strftime("%d.%m.%Y")
    return moment.strftime("%d.%m.%Y, %H:%M")


def count(n: int, locale: str) -> str:
    """A count as the locale writes it: en-US keeps its plain digits, de-DE groups thousands."""
    return str(n) if locale != "de-DE" else format_number(n, locale)
