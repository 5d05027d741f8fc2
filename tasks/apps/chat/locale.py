"""Huddle's UI text in German (de-DE), and its message times as each locale writes them.

A text with a `{field}` is a template the app fills after translating. Messages, channel
names, topics and people are data and stay as stored.
"""

from __future__ import annotations

import datetime as dt

from cua.tasks.apps.i18n import format_day

__all__ = ["DE", "stamp"]

DE: dict[str, str] = {
    # sidebar and chrome
    "Workspace": "Arbeitsbereich", "Search messages": "Nachrichten durchsuchen", "Search": "Suchen", "Channels": "Kanäle",
    "Browse channels": "Kanäle durchsuchen", "New channel": "Neuer Kanal", "Direct messages": "Direktnachrichten",
    "People": "Personen", "Direct message": "Direktnachricht", "{n} mentions": "{n} Erwähnungen", "{n} unread": "{n} ungelesen",
    "Not allowed": "Nicht erlaubt", "Cannot do that": "Nicht möglich",
    # messages
    "(edited)": "(bearbeitet)", "📌 Pinned": "📌 Angeheftet", "remove": "entfernen", "add": "hinzufügen",
    "{emoji} {n}, {verb} your reaction": "{emoji} {n}, deine Reaktion {verb}", "React {emoji}": "Mit {emoji} reagieren",
    "React to message {id}": "Auf Nachricht {id} reagieren", "Pin": "Anheften", "Unpin": "Lösen", "Edit": "Bearbeiten",
    "Delete": "Löschen", "Reply": "Antworten", "1 reply": "1 Antwort", "{n} replies": "{n} Antworten",
    "Older messages": "Ältere Nachrichten", "This channel is archived. Nobody can post in it.":
        "Dieser Kanal ist archiviert. Niemand kann darin schreiben.",
    "You are viewing {channel}.": "Du siehst {channel}.", "Join channel": "Kanal beitreten", "Message {channel}": "Nachricht an {channel}",
    "Send": "Senden", "Pinned": "Angeheftet", "Settings": "Einstellungen", "{n} members": "{n} Mitglieder",
    "No messages yet.": "Noch keine Nachrichten.", "Messages": "Nachrichten", "Nothing is pinned yet.": "Noch nichts angeheftet.",
    "Pinned in {channel}": "Angeheftet in {channel}", "Back to channel": "Zurück zum Kanal",
    "Thread in {channel}": "Thread in {channel}", "Reply in thread": "Im Thread antworten", "Reply…": "Antworten…",
    "Thread": "Thread", "Edit message": "Nachricht bearbeiten", "Save changes": "Änderungen speichern", "Cancel": "Abbrechen",
    "Delete message?": "Nachricht löschen?", "Delete message": "Nachricht löschen",
    # settings
    "Remove {name}": "{name} entfernen", "Remove": "Entfernen", "Topic": "Thema", "Save topic": "Thema speichern",
    "Add a member": "Mitglied hinzufügen", "Choose a person…": "Person auswählen…", "Add": "Hinzufügen",
    "Leave channel": "Kanal verlassen", "Archive channel": "Kanal archivieren", "This channel is archived.": "Dieser Kanal ist archiviert.",
    "Settings of {channel}": "Einstellungen von {channel}", "Members ({n})": "Mitglieder ({n})",
    "Channel settings": "Kanaleinstellungen", "Archive {channel}?": "{channel} archivieren?",
    "Nobody will be able to post in it, and it leaves everyone's sidebar. Its messages stay searchable.":
        "Niemand kann mehr darin schreiben, und er verschwindet aus allen Seitenleisten. Seine Nachrichten bleiben durchsuchbar.",
    "Archive": "Archivieren",
    # directory
    "archived": "archiviert", "joined": "beigetreten", "{topic} · {n} members": "{topic} · {n} Mitglieder",
    "Name": "Name", "Topic (optional)": "Thema (optional)", "Make private: only invited members can see it":
        "Privat machen: Nur eingeladene Mitglieder sehen ihn", "Members": "Mitglieder", "Create channel": "Kanal erstellen",
    "Search people": "Personen durchsuchen", "Status emoji": "Status-Emoji", "Status": "Status", "Save status": "Status speichern",
    "Message {name}": "{name} eine Nachricht senden", "Message": "Nachricht", "Presence": "Anwesenheit",
    "Local time zone": "Lokale Zeitzone", "Language": "Sprache", "active": "aktiv", "away": "abwesend", "dnd": "nicht stören",
    "in {channel}": "in {channel}", "{n} results": "{n} Treffer", " (showing the newest 50)": " (die neuesten 50)",
    # refusals
    "No such channel.": "Kein solcher Kanal.", "This channel is private: only its members can see it.":
        "Dieser Kanal ist privat: Nur seine Mitglieder sehen ihn.",
    "This channel is archived: nobody can post in it.": "Dieser Kanal ist archiviert: Niemand kann darin schreiben.",
    "Join the channel to post in it.": "Tritt dem Kanal bei, um darin zu schreiben.", "No such message.": "Keine solche Nachricht.",
    "You can only edit or delete your own messages.": "Du kannst nur deine eigenen Nachrichten bearbeiten oder löschen.",
    "This channel is archived: its messages cannot change.": "Dieser Kanal ist archiviert: Seine Nachrichten können sich nicht ändern.",
    "A direct message has no settings.": "Eine Direktnachricht hat keine Einstellungen.",
    "Join the channel to change its settings.": "Tritt dem Kanal bei, um seine Einstellungen zu ändern.",
    "This channel is archived: its settings cannot change.": "Dieser Kanal ist archiviert: Seine Einstellungen können sich nicht ändern.",
    "A message cannot be empty.": "Eine Nachricht darf nicht leer sein.",
    "A message can be at most {n} characters long.": "Eine Nachricht hat höchstens {n} Zeichen.",
    "You cannot join this conversation.": "Du kannst diesem Gespräch nicht beitreten.",
    "A topic can be at most 250 characters long.": "Ein Thema hat höchstens 250 Zeichen.",
    "Choose a person to add.": "Wähle eine Person zum Hinzufügen.",
    "To leave a channel, use Leave channel.": "Um einen Kanal zu verlassen, nutze „Kanal verlassen“.",
    "Everyone stays in #general.": "Alle bleiben in #general.", "#general cannot be archived.": "#general kann nicht archiviert werden.",
    "Choose one of the workspace's reactions: {emoji}.": "Wähle eine der Reaktionen des Arbeitsbereichs: {emoji}.",
    "Channel names are 2-80 lowercase letters, digits, dashes or underscores, starting with a letter or digit.":
        "Kanalnamen haben 2–80 Kleinbuchstaben, Ziffern, Binde- oder Unterstriche und beginnen mit einem Buchstaben oder einer Ziffer.",
    "A channel named {name} already exists.": "Ein Kanal namens {name} existiert bereits.",
    "Choose members from the directory.": "Wähle Mitglieder aus dem Verzeichnis.", "No such person.": "Keine solche Person.",
    "Choose another person to message.": "Wähle eine andere Person für die Nachricht.",
    "A status is at most 100 characters, its emoji at most 8.": "Ein Status hat höchstens 100 Zeichen, sein Emoji höchstens 8.",
}


def stamp(value: str, locale: str) -> str:
    """A stored `YYYY-MM-DD HH:MM` message time: as stored in en-US, `02.03.2026 14:05` in de-DE."""
    if locale == "en-US":
        return value
    try:
        return f"{format_day(dt.date.fromisoformat(value[:10]), locale, with_year=True)}{value[10:]}"
    except ValueError:
        return value
