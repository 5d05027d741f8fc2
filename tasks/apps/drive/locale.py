"""Stratus Drive's UI text in German (de-DE), and sizes and dates as each locale writes them.

A text with a `{field}` is a template the app fills after translating. File names, people
and file contents are data and stay as stored.
"""

from __future__ import annotations

import datetime as dt

from cua.tasks.apps.i18n import format_date, format_number

__all__ = ["DE", "date", "number", "size"]

DE: dict[str, str] = {
    # navigation and chrome
    "My Drive": "Meine Ablage", "Shared with me": "Für mich freigegeben", "Recent": "Zuletzt verwendet", "Starred": "Markiert",
    "Trash": "Papierkorb", "Cannot do that": "Nicht möglich", "Back to My Drive": "Zurück zu Meine Ablage",
    "Search in Drive": "In Drive suchen", "Search": "Suchen", "Drive navigation": "Drive-Navigation",
    "Upload a file": "Datei hochladen", "Folders": "Ordner", "Storage used": "Speicher belegt",
    "{used} of {quota} used · {free} free": "{used} von {quota} belegt · {free} frei",
    # listings
    "Nothing here.": "Hier ist nichts.", "Confidential": "Vertraulich", "Link": "Link", "Restore": "Wiederherstellen",
    "Restore {name}": "{name} wiederherstellen", "Star {name}": "{name} markieren", "Details": "Details",
    "Details of {name}": "Details von {name}", "Files": "Dateien", "Location": "Ort", "me": "ich", "Name": "Name",
    "Owner": "Eigentümer", "Deleted": "Gelöscht", "Modified": "Geändert", "Size": "Größe", "Actions": "Aktionen",
    "{n} bytes": "{n} Bytes", "View": "Ansicht", "List": "Liste", "Grid": "Raster",
    # folders and upload
    "New folder": "Neuer Ordner", "Folder name": "Ordnername", "Create folder": "Ordner erstellen", "Breadcrumb": "Pfad",
    "Upload to {folder}": "Hochladen nach {folder}", "File name": "Dateiname", "Content": "Inhalt",
    "Or choose a text file": "Oder eine Textdatei wählen",
    "Text files only (.txt, .md, .csv), up to 1 MB. The file counts against your storage.":
        "Nur Textdateien (.txt, .md, .csv), bis 1 MB. Die Datei zählt zu Ihrem Speicher.",
    "Upload": "Hochladen", "Cancel": "Abbrechen",
    # details
    "Open": "Öffnen", "Make a copy": "Kopie erstellen", "Version history": "Versionsverlauf", "Share": "Freigeben",
    "Rename": "Umbenennen", "Move": "Verschieben", "Move to trash": "In den Papierkorb", "File actions": "Dateiaktionen",
    "Type": "Typ", "(me)": "(ich)", "{date} by {name}": "{date} von {name}", "Created": "Erstellt",
    "(in the trash)": "(im Papierkorb)", "Who has access": "Wer hat Zugriff", "Only the owner": "Nur der Eigentümer",
    "Link sharing": "Linkfreigabe", "Anyone with the link can view": "Jeder mit dem Link kann ansehen",
    "Restricted": "Eingeschränkt", "Preview": "Vorschau", "An empty CSV file.": "Eine leere CSV-Datei.",
    "Showing 100 of {n} rows.": "100 von {n} Zeilen werden angezeigt.", "Preview of {name}": "Vorschau von {name}",
    "No preview for {type} files.": "Keine Vorschau für {type}-Dateien.", "{size} ({n} bytes)": "{size} ({n} Bytes)",
    "viewer": "Betrachter", "commenter": "Kommentator", "editor": "Bearbeiter",
    "Viewer": "Betrachter", "Commenter": "Kommentator", "Editor": "Bearbeiter",
    # types
    "Folder": "Ordner", "PDF": "PDF", "Document": "Dokument", "Spreadsheet": "Tabelle", "Presentation": "Präsentation",
    "Image": "Bild", "Video": "Video", "Audio": "Audio", "Archive": "Archiv", "Text": "Text", "CSV": "CSV",
    # rename, move
    "New name": "Neuer Name", "Rename {name}": "{name} umbenennen", " (current location)": " (aktueller Ort)",
    "Move “{name}” to…": "„{name}“ verschieben nach …", "Choose a folder": "Ordner wählen", "Move here": "Hierher verschieben",
    "Move {name}": "{name} verschieben",
    # sharing
    "Remove access": "Zugriff entfernen", "Update access for {name}": "Zugriff für {name} aktualisieren", "Save": "Speichern",
    "Role of {name}": "Rolle von {name}", "Choose a person…": "Person auswählen…",
    "This file is labelled Confidential.": "Diese Datei ist als vertraulich gekennzeichnet.",
    "Share “{name}”": "„{name}“ freigeben", "Add people": "Personen hinzufügen", "Role": "Rolle",
    "People with access": "Personen mit Zugriff", "General access": "Allgemeiner Zugriff",
    "On: anyone who has the link can open it.": "An: Jeder, der den Link hat, kann sie öffnen.",
    "Off: only the people above can open it.": "Aus: Nur die Personen oben können sie öffnen.", "Done": "Fertig",
    "Share {name}": "{name} freigeben",
    # versions
    "Current": "Aktuell", "Restore version {n}": "Version {n} wiederherstellen", "Version {n}": "Version {n}",
    "Versions": "Versionen", "Version": "Version", "Saved": "Gespeichert", "By": "Von", "Note": "Notiz",
    "Back to the file": "Zurück zur Datei", "Versions of {name}": "Versionen von {name}",
    # trash
    "Empty trash": "Papierkorb leeren", "Items in the trash still count against your storage.":
        "Elemente im Papierkorb zählen weiter zu Ihrem Speicher.",
    "Delete {n} items forever?": "{n} Elemente endgültig löschen?",
    "Everything in the trash is deleted for good ({size}). This cannot be undone.":
        "Alles im Papierkorb wird endgültig gelöscht ({size}). Das kann nicht rückgängig gemacht werden.",
    "Delete forever": "Endgültig löschen",
    # search
    "Any time": "Beliebig", "Today": "Heute", "Last 7 days": "Letzte 7 Tage", "Last 30 days": "Letzte 30 Tage",
    "Last year": "Letztes Jahr", "Any type": "Beliebiger Typ", "Anyone": "Beliebig", "Owned by me": "Eigene",
    "Not owned by me": "Nicht eigene", "Name contains": "Name enthält", "1 result": "1 Treffer", "{n} results": "{n} Treffer",
    # refusals
    "Enter a name.": "Geben Sie einen Namen ein.", "A name cannot contain '/' or be '.' or '..'.":
        "Ein Name darf kein „/“ enthalten und nicht „.“ oder „..“ sein.",
    "A name is at most 255 characters.": "Ein Name hat höchstens 255 Zeichen.",
    "Only text files can be uploaded here: a name ending in .txt, .md or .csv.":
        "Hier können nur Textdateien hochgeladen werden: ein Name, der auf .txt, .md oder .csv endet.",
    "No such file or folder.": "Keine solche Datei und kein solcher Ordner.",
    "Only the owner, {owner}, can {doing} “{name}”.": "Nur der Eigentümer, {owner}, kann „{name}“ {doing}.",
    "“{name}” is in the trash: restore it first.": "„{name}“ liegt im Papierkorb: Stellen Sie es zuerst wieder her.",
    "That is a file, not a folder.": "Das ist eine Datei, kein Ordner.",
    "Not enough storage: this needs {need} ({need_bytes} bytes) and only {free} ({free_bytes} bytes) is free. "
    "Empty the trash or delete files to make room.":
        "Nicht genug Speicher: Benötigt werden {need} ({need_bytes} Bytes), frei sind nur {free} ({free_bytes} Bytes). "
        "Leeren Sie den Papierkorb oder löschen Sie Dateien, um Platz zu schaffen.",
    "“{name}” already exists in this folder: choose another name.":
        "„{name}“ existiert in diesem Ordner bereits: Wählen Sie einen anderen Namen.",
    "“{name}” is in the trash: restore it to open it.": "„{name}“ liegt im Papierkorb: Stellen Sie es wieder her, um es zu öffnen.",
    "A file to upload here is at most 1 MB.": "Eine Datei zum Hochladen hat höchstens 1 MB.",
    "The chosen file is not UTF-8 text.": "Die gewählte Datei ist kein UTF-8-Text.",
    "This file has no preview.": "Diese Datei hat keine Vorschau.", "My Drive itself cannot be moved.":
        "Meine Ablage selbst kann nicht verschoben werden.",
    "Choose a folder to move it to.": "Wählen Sie einen Zielordner.", "Choose one of your folders in My Drive.":
        "Wählen Sie einen Ihrer Ordner in Meine Ablage.",
    "A folder cannot move into itself or into a folder inside it.":
        "Ein Ordner kann nicht in sich selbst oder in einen Ordner darin verschoben werden.",
    "“{name}” is already in “{target}”.": "„{name}“ liegt bereits in „{target}“.",
    "Folders cannot be copied: copy the files inside them.": "Ordner können nicht kopiert werden: Kopieren Sie die Dateien darin.",
    "My Drive itself cannot be deleted.": "Meine Ablage selbst kann nicht gelöscht werden.",
    "“{name}” is not in the trash.": "„{name}“ liegt nicht im Papierkorb.",
    "Choose a person from the list (or type their email address exactly).":
        "Wählen Sie eine Person aus der Liste (oder geben Sie ihre E-Mail-Adresse genau ein).",
    "You own this file already.": "Diese Datei gehört Ihnen bereits.",
    "Choose what they can do: viewer, commenter or editor.": "Wählen Sie, was sie tun dürfen: Betrachter, Kommentator oder Bearbeiter.",
    "{name} already has access: change their role in the list below.":
        "{name} hat bereits Zugriff: Ändern Sie die Rolle in der Liste unten.",
    "That person has no access to change.": "Diese Person hat keinen Zugriff, der sich ändern ließe.",
    "Choose viewer, commenter, editor, or remove access.": "Wählen Sie Betrachter, Kommentator, Bearbeiter oder Zugriff entfernen.",
    "Folders have no versions.": "Ordner haben keine Versionen.", "No such version.": "Keine solche Version.",
    "That version is the current one already.": "Diese Version ist bereits die aktuelle.",
    "The trash is already empty.": "Der Papierkorb ist bereits leer.",
    "Choose a type from the list, not {value!r}.": "Wählen Sie einen Typ aus der Liste, nicht {value!r}.",
    "Choose an owner from the list.": "Wählen Sie einen Eigentümer aus der Liste.",
    "Choose a time from the list.": "Wählen Sie einen Zeitraum aus der Liste.",
    # what only the owner can do ("Only the owner, X, can {doing} ...")
    "rename": "umbenennen", "move": "verschieben", "share": "freigeben", "delete": "löschen", "restore": "wiederherstellen",
    "add to": "etwas hinzufügen zu", "upload to": "hochladen nach", "restore a version of": "eine Version wiederherstellen von",
}


def size(n: int, locale: str) -> str:
    """Bytes as the drive shows them: `812 B`, `1.4 KB`, `2.07 GB` in en-US; `1,4 KB` in de-DE (1 KB = 1,024 bytes)."""
    if n < 1024:
        return f"{n} B"
    for unit, power in (("KB", 1), ("MB", 2), ("GB", 3), ("TB", 4)):
        value = n / 1024 ** power
        if value < 1024 or unit == "TB":
            decimals = 2 if unit in ("GB", "TB") else 1
            text = f"{value:.{decimals}f}"  # no thousands separator: `1020.0 KB`, as the drive always wrote it
            return f"{text.replace('.', ',') if locale == 'de-DE' else text} {unit}"
    return f"{n} B"  # pragma: no cover (the loop returns)


def number(n: int, locale: str) -> str:
    """A count with the locale's thousands separator (`12,345` / `12.345`)."""
    return format_number(n, locale)


def date(day: dt.date, locale: str) -> str:
    """A modified date in a listing: `Mar 2, 2026` in en-US, `2. März 2026` in de-DE."""
    return f"{day.strftime('%b')} {day.day}, {day.year}" if locale == "en-US" else format_date(day, locale)
