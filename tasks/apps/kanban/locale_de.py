"""The kanban app's German UI text (English UI text -> German), beside the shared catalogue of
`cua.tasks.apps.i18n`. Boards, columns, cards, tags and people are data, never translated."""

from __future__ import annotations

DE: dict[str, str] = {
    "Boards": "Boards", "{n} cards": "{n} Karten", "Assigned to me": "Mir zugewiesen", "Card": "Karte", "Column": "Spalte",
    "Due": "Fällig", "Due {day}": "Fällig {day}", "Not found": "Nicht gefunden", "No such board.": "Kein solches Board.",
    "+ Add a card": "+ Karte hinzufügen", "Title of new card in {column}": "Titel der neuen Karte in {column}",
    "Card title": "Kartentitel", "Add card": "Karte hinzufügen", "Filter by title, tag or person": "Nach Titel, Schlagwort oder Person filtern",
    "Filter cards": "Karten filtern", "Filter": "Filtern", "Clear": "Zurücksetzen",
    "Drag with the mouse, or focus a card and press Alt+Arrow keys to move it.":
        "Mit der Maus ziehen, oder eine Karte fokussieren und mit Alt+Pfeiltasten verschieben.",
    "draggable card": "verschiebbare Karte", "Close": "Schließen", "Title": "Titel", "Description": "Beschreibung",
    "Due date": "Fälligkeitsdatum", "Choose due date": "Fälligkeitsdatum wählen", "Tags": "Schlagwörter",
    "Assignees": "Zuständige", "Save": "Speichern", "Cancel": "Abbrechen", "Move to": "Verschieben nach",
    "Position": "Position", "Move": "Verschieben", "Comments": "Kommentare", "Comment": "Kommentar",
    "Write a comment": "Kommentar schreiben", "Delete card…": "Karte löschen…", "Confirm delete": "Löschen bestätigen",
    "Delete “{title}”? This cannot be undone.": "„{title}“ löschen? Das lässt sich nicht rückgängig machen.",
    "Delete": "Löschen", "unknown": "unbekannt",
    "Moved “{title}” to {column}, position {position}.": "„{title}“ nach {column} verschoben, Position {position}.",
    "Could not move the card; reloading.": "Die Karte ließ sich nicht verschieben; die Seite wird neu geladen.",
}
