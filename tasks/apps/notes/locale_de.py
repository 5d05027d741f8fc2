"""The notes app's German UI text (English UI text -> German), beside the shared catalogue of
`cua.tasks.apps.i18n`. A note's title, text and folder names are data and never translated."""

from __future__ import annotations

DE: dict[str, str] = {
    "All notes": "Alle Notizen", "Search": "Suchen", "Folders": "Ordner", "Not found": "Nicht gefunden",
    "No such folder.": "Kein solcher Ordner.", "No such note.": "Keine solche Notiz.", "No notes.": "Keine Notizen.",
    "Pinned": "Angeheftet", "Rename": "Umbenennen", "Folder name": "Ordnername", "Save name": "Namen speichern",
    "Cancel": "Abbrechen", "New note title": "Titel der neuen Notiz", "New note": "Neue Notiz",
    "Subfolder name": "Name des Unterordners", "New subfolder name": "Name des neuen Unterordners",
    "New subfolder": "Neuer Unterordner", "Saved.": "Gespeichert.", "Bold": "Fett", "Italic": "Kursiv",
    "Underline": "Unterstrichen", "Heading 1": "Überschrift 1", "Heading 2": "Überschrift 2", "Paragraph": "Absatz",
    "Bulleted list": "Aufzählung", "Numbered list": "Nummerierte Liste", "• List": "• Liste", "1. List": "1. Liste",
    "Note title": "Titel der Notiz", "Formatting": "Formatierung", "Note body": "Text der Notiz", "Save": "Speichern",
    "Last edited {when}": "Zuletzt bearbeitet am {when}", "Move to": "Verschieben nach", "Move": "Verschieben",
    "Pin": "Anheften", "Unpin": "Lösen", "Delete…": "Löschen…", "Preview": "Vorschau", "Confirm delete": "Löschen bestätigen",
    "Delete “{title}”? This cannot be undone.": "„{title}“ löschen? Das lässt sich nicht rückgängig machen.",
    "Delete note": "Notiz löschen", "Updated {when}": "Aktualisiert am {when}",
    "{n} result(s) for “{q}”": "{n} Treffer für „{q}“", "Search notes": "Notizen durchsuchen",
}
