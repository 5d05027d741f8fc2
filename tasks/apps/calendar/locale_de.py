"""The calendar's German UI text (English UI text -> German) and its names of days and months,
beside the shared catalogue of `cua.tasks.apps.i18n`. Event titles, places and people are data,
never translated; a calendar's name or an answer shows translated while its value stays."""

from __future__ import annotations

import datetime as dt

DE: dict[str, str] = {
    # navigation, titles
    "Month": "Monat", "Week": "Woche", "Day": "Tag", "Invitations ({n})": "Einladungen ({n})", "New event": "Neuer Termin",
    "This month": "Dieser Monat", "Not found": "Nicht gefunden", "Use /month/YYYY-MM.": "Verwenden Sie /month/JJJJ-MM.",
    "Use /week/YYYY-MM-DD.": "Verwenden Sie /week/JJJJ-MM-TT.", "Use /day/YYYY-MM-DD.": "Verwenden Sie /day/JJJJ-MM-TT.",
    "+{n} more": "+{n} weitere", "New event on {day}": "Neuer Termin am {day}", "Previous month": "Vorheriger Monat",
    "Today": "Heute", "Next month": "Nächster Monat", "Week view": "Wochenansicht", "Month view": "Monatsansicht",
    "Previous week": "Vorherige Woche", "Next week": "Nächste Woche", "Week of {day}": "Woche vom {day}",
    "Previous day": "Vorheriger Tag", "Next day": "Nächster Tag",
    # calendars and answers (shown; their values stay)
    "Work": "Arbeit", "Personal": "Privat", "Family": "Familie",
    "accepted": "zugesagt", "declined": "abgesagt", "pending": "offen",
    # the day and the invitations
    "All day": "Ganztägig", "all day": "ganztägig", "Time": "Zeit", "Event": "Termin", "Where": "Ort", "Calendar": "Kalender",
    "My answer": "Meine Antwort", "Nothing scheduled.": "Nichts geplant.", "Invitations": "Einladungen", "When": "Wann",
    "Organizer": "Organisator", "Answer": "Antwort", "Accept": "Zusagen", "Decline": "Absagen",
    "Accept {title}": "{title} zusagen", "Decline {title}": "{title} absagen", "No invitations waiting.": "Keine offenen Einladungen.",
    # one event
    "No such event.": "Kein solcher Termin.", "No guests.": "Keine Gäste.", "{day}, all day": "{day}, ganztägig",
    "Repeats daily": "Wiederholt sich täglich", "Repeats weekly": "Wiederholt sich wöchentlich", " until {day}": " bis {day}",
    "Edit": "Bearbeiten", "Delete…": "Löschen…", "Confirm delete": "Löschen bestätigen",
    "Delete “{title}”?": "„{title}“ löschen?", "Delete “{title}” and all its repeats?": "„{title}“ und alle Wiederholungen löschen?",
    "Delete": "Löschen", "Cancel": "Abbrechen", "Going? (now: {answer})": "Nehmen Sie teil? (jetzt: {answer})",
    "Calendar:": "Kalender:", "Where:": "Ort:", "Organizer:": "Organisator:", "me": "ich", "Guests": "Gäste",
    "Back to {month}": "Zurück zu {month}",
    # the form
    "Does not repeat": "Keine Wiederholung", "Daily": "Täglich", "Weekly": "Wöchentlich", "Choose {label}": "{label} wählen",
    "Title": "Titel", "Date": "Datum", "Start": "Beginn", "End": "Ende", "Repeat": "Wiederholen",
    "Repeat until": "Wiederholen bis", "Location": "Ort", "Description": "Beschreibung", "Invite guests": "Gäste einladen",
    "Filter people": "Personen filtern", "Save": "Speichern", "Edit event": "Termin bearbeiten", "Not allowed": "Nicht erlaubt",
    "Only events you organize can be edited.": "Nur Termine, die Sie organisieren, lassen sich bearbeiten.",
    "Give the event a title.": "Geben Sie dem Termin einen Titel.", "Date must be YYYY-MM-DD.": "Das Datum muss JJJJ-MM-TT sein.",
    "Start and end times must be HH:MM (24-hour).": "Beginn und Ende müssen HH:MM sein (24 Stunden).",
    "The end time must be after the start time.": "Das Ende muss nach dem Beginn liegen.",
    "Repeat-until must be YYYY-MM-DD.": "„Wiederholen bis“ muss JJJJ-MM-TT sein.",
    "Repeat-until must not be before the date.": "„Wiederholen bis“ darf nicht vor dem Datum liegen.",
}

DAYS = {"en-US": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
        "de-DE": ("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag")}
SHORT_DAYS = {"en-US": ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"), "de-DE": ("Mo", "Di", "Mi", "Do", "Fr", "Sa", "So")}
MONTHS = {"en-US": ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                    "November", "December"),
          "de-DE": ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
                    "November", "Dezember")}
SHORT_MONTHS = {"en-US": ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"),
                "de-DE": ("Jan.", "Feb.", "März", "Apr.", "Mai", "Juni", "Juli", "Aug.", "Sept.", "Okt.", "Nov.", "Dez.")}


def month_year(day: dt.date, locale: str) -> str:
    """`March 2026` / `März 2026`."""
    return f"{MONTHS[locale][day.month - 1]} {day.year}"


def long_day(day: dt.date, locale: str) -> str:
    """`Tuesday, March 3, 2026` / `Dienstag, 3. März 2026`."""
    if locale == "de-DE":
        return f"{DAYS[locale][day.weekday()]}, {day.day}. {MONTHS[locale][day.month - 1]} {day.year}"
    return f"{DAYS[locale][day.weekday()]}, {MONTHS[locale][day.month - 1]} {day.day}, {day.year}"


def short_date(day: dt.date, locale: str) -> str:
    """`Mar 2, 2026` / `2. März 2026`."""
    if locale == "de-DE":
        return f"{day.day}. {MONTHS[locale][day.month - 1]} {day.year}"
    return f"{SHORT_MONTHS[locale][day.month - 1]} {day.day}, {day.year}"
