"""Northwind Admin's UI in German (de-DE), and how it writes its times per locale.

The shared catalogue (`cua.tasks.apps.i18n`) holds the words every app shares; this one the
console's own. Member names, emails, teams, time zones, key names and the audit trail's
entries are data: never translated. Option and radio *values* (roles, statuses, themes)
stay the stored words in every locale; only their labels change.
"""

from __future__ import annotations

import datetime as dt

__all__ = ["DE", "moment"]

DE: dict[str, str] = {
    # sections and chrome
    "General": "Allgemein", "Notifications": "Benachrichtigungen", "Security": "Sicherheit", "Users": "Benutzer",
    "API keys": "API-Schlüssel", "Audit log": "Protokoll", "Settings sections": "Einstellungsbereiche",
    "Signed in as": "Angemeldet als", "Not found": "Nicht gefunden", "Cancel": "Abbrechen", "Confirm": "Bestätigen",
    # switches
    "Email notifications": "E-Mail-Benachrichtigungen", "Activity digests and mentions by email.":
        "Aktivitätsübersichten und Erwähnungen per E-Mail.",
    "SMS alerts": "SMS-Warnungen", "Text messages for urgent incidents.": "Textnachrichten bei dringenden Vorfällen.",
    "Weekly report": "Wochenbericht", "A summary of the organisation's usage every Monday.":
        "Jeden Montag eine Übersicht über die Nutzung der Organisation.",
    "Security alerts": "Sicherheitswarnungen", "New sign-ins, key resets and role changes.":
        "Neue Anmeldungen, Schlüssel-Zurücksetzungen und Rollenänderungen.",
    "Product news": "Produktneuigkeiten", "Occasional announcements about new features.":
        "Gelegentliche Ankündigungen neuer Funktionen.",
    "Changes save immediately.": "Änderungen werden sofort gespeichert.",
    # general
    "Settings saved.": "Einstellungen gespeichert.", "Organisation name": "Name der Organisation", "Time zone": "Zeitzone",
    "Language": "Sprache", "Theme": "Design", "Date format": "Datumsformat", "Save changes": "Änderungen speichern",
    "light": "Hell", "dark": "Dunkel", "system": "System",
    # security
    "Security settings saved.": "Sicherheitseinstellungen gespeichert.",
    "Require two-factor authentication": "Zwei-Faktor-Authentifizierung verlangen",
    "Every member must set up 2FA to sign in.": "Jedes Mitglied muss 2FA einrichten, um sich anzumelden.",
    "Turn off required two-factor authentication? Members will be able to sign in with a password only.":
        "Verpflichtende Zwei-Faktor-Authentifizierung abschalten? Mitglieder können sich dann nur mit Passwort anmelden.",
    "Allow public share links": "Öffentliche Freigabelinks erlauben",
    "Anyone with a link can view shared documents.": "Jeder mit einem Link kann freigegebene Dokumente ansehen.",
    "Session timeout": "Sitzungs-Zeitlimit", "Minimum password length": "Minimale Passwortlänge",
    "Save security settings": "Sicherheitseinstellungen speichern", "Turn off": "Abschalten",
    # users
    "owner": "Inhaber", "admin": "Admin", "member": "Mitglied", "viewer": "Betrachter",
    "active": "aktiv", "suspended": "gesperrt", "invited": "eingeladen", "revoked": "widerrufen", "never": "nie",
    "Previous": "Zurück", "Next": "Weiter", "Page": "Seite", "of": "von", "users": "Benutzer",
    "Invite user": "Benutzer einladen", "Search name, email or team": "Name, E-Mail oder Team suchen",
    "Search users": "Benutzer suchen", "Role": "Rolle", "All roles": "Alle Rollen", "Status": "Status",
    "All statuses": "Alle Status", "Filter": "Filtern", "Name": "Name", "Email": "E-Mail", "Team": "Team",
    "Last sign-in": "Letzte Anmeldung", "last sign-in": "letzte Anmeldung",
    "Enter a name and a valid email.": "Geben Sie einen Namen und eine gültige E-Mail-Adresse ein.",
    "is already a member.": "ist bereits Mitglied.", "Choose a role and a team.": "Wählen Sie eine Rolle und ein Team.",
    "Full name": "Vollständiger Name", "Send invitation": "Einladung senden", "No such user.": "Kein solcher Benutzer.",
    "The owner's role and status cannot be changed.": "Rolle und Status des Inhabers können nicht geändert werden.",
    "Invalid role, team or status.": "Ungültige Rolle, ungültiges Team oder ungültiger Status.",
    "Danger zone": "Gefahrenbereich", "Deleting a user removes their access immediately.":
        "Das Löschen eines Benutzers entzieht ihm sofort den Zugang.",
    "Delete user…": "Benutzer löschen…", "Delete user": "Benutzer löschen", "Delete": "Löschen",
    "Type their email to confirm.": "Geben Sie zur Bestätigung die E-Mail-Adresse ein.", "Type": "Geben Sie",
    "to confirm": "zur Bestätigung ein", "Save user": "Benutzer speichern", "Back to users": "Zurück zu den Benutzern",
    # flashes carried in the address
    "Invitation sent": "Einladung gesendet", "Saved": "Gespeichert",
    "Not deleted: the email did not match": "Nicht gelöscht: Die E-Mail-Adresse stimmte nicht überein",
    "Deleted": "Gelöscht",
    # API keys
    "New secret for": "Neues Geheimnis für",
    "(copy it now, it will not be shown again)": "(jetzt kopieren, es wird nicht noch einmal angezeigt)",
    "Reset the secret of": "Das Geheimnis zurücksetzen von",
    "Apps using the old secret stop working at once.": "Apps mit dem alten Geheimnis funktionieren sofort nicht mehr.",
    "Reset secret": "Geheimnis zurücksetzen", "Reset…": "Zurücksetzen…", "Revoke": "Widerrufen",
    "This cannot be undone.": "Das lässt sich nicht rückgängig machen.", "Revoke key": "Schlüssel widerrufen",
    "Revoke…": "Widerrufen…", "Secret": "Geheimnis", "Created": "Erstellt", "Last reset": "Zuletzt zurückgesetzt",
    "New key name": "Name des neuen Schlüssels", "Create key": "Schlüssel erstellen",
    # audit
    "When": "Wann", "Who": "Wer", "Action": "Aktion", "Detail": "Details",
}


def moment(iso: str | None, locale: str, never: str) -> str:
    """A sign-in or audit time: `2026-03-02 14:05` in en-US (as before variants), `02.03.2026, 14:05`
    in de-DE; a day alone as `02.03.2026`; `never` (already in the locale) for none."""
    if not iso:
        return never
    if locale != "de-DE":
        return iso.replace("T", " ")
    try:
        when = dt.datetime.fromisoformat(iso)
    except ValueError:
        return iso.replace("T", " ")
    return when.strftime("%d.%m.%Y") if len(iso) <= 10 else when.strftime("%d.%m.%Y, %H:%M")
