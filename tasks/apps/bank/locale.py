"""Meridian Bank's UI text in German (de-DE), and money and dates as each locale writes them.

The shared catalogue (`cua.tasks.apps.i18n`) holds the chrome every app shares; a bank's own
words (payee, standing order, IBAN check) live here, beside the app that shows them. A text
with a `{field}` is a template: the app fills it after translating, so the German sentence
orders its own parts. Records (descriptions, payee names, references) are data and stay as stored.
"""

from __future__ import annotations

import datetime as dt

from cua.tasks.apps.i18n import format_day, format_number

__all__ = ["DE", "day", "money", "stamp"]

DE: dict[str, str] = {
    # navigation and titles
    "Accounts": "Konten", "Transfer": "Überweisung", "Payees": "Empfänger", "Scheduled": "Daueraufträge",
    "Cards": "Karten", "Security": "Sicherheit", "Messages": "Nachrichten", "Cannot do that": "Nicht möglich",
    "Back to your accounts": "Zurück zu Ihren Konten", "Your accounts": "Ihre Konten",
    "Make a transfer": "Überweisung tätigen", "Add a payee": "Empfänger hinzufügen", "Recent activity": "Letzte Umsätze",
    "Date": "Datum", "Description": "Beschreibung", "Account": "Konto", "Amount": "Betrag", "Balance": "Kontostand",
    "Category": "Kategorie", "Limit {limit} · available {available}": "Limit {limit} · verfügbar {available}",
    "Balance of {name}": "Kontostand von {name}", "Balance {amount}": "Kontostand {amount}",
    "Statements": "Kontoauszüge", "Statement {month}": "Kontoauszug {month}",
    "Statements · {name}": "Kontoauszüge · {name}", "Statement {month} · {name}": "Kontoauszug {month} · {name}",
    "{count} transactions · net {amount}": "{count} Umsätze · netto {amount}",
    "Category of {description} on {day}": "Kategorie von {description} am {day}",
    "Save category of transaction {id}": "Kategorie von Umsatz {id} speichern",
    "All categories": "Alle Kategorien", "From": "Von", "To": "Bis", "Min amount": "Mindestbetrag",
    "Max amount": "Höchstbetrag", "Apply": "Anwenden", "Opening balance": "Anfangssaldo", "Paid in": "Eingänge",
    "Paid out": "Ausgänge", "Closing balance": "Endsaldo",
    # transfers
    "Pay to": "An", "Pay from": "Von", "Choose…": "Auswählen…", "Amount (€)": "Betrag (€)", "Reference": "Verwendungszweck",
    "Payments to payees: daily limit {limit}, {left} left today.":
        "Zahlungen an Empfänger: Tageslimit {limit}, heute noch {left} verfügbar.",
    "Review transfer": "Überweisung prüfen", "Confirm transfer": "Überweisung bestätigen", "Transfer sent": "Überweisung gesendet",
    "Transfer cancelled": "Überweisung storniert", "This transfer was cancelled.": "Diese Überweisung wurde storniert.",
    "Transfer sent. Confirmation number": "Überweisung gesendet. Bestätigungsnummer",
    "Check the details. Nothing is sent until you confirm.": "Prüfen Sie die Angaben. Nichts wird gesendet, bevor Sie bestätigen.",
    "Confirm and send {amount}": "{amount} bestätigen und senden", "a deleted payee": "ein gelöschter Empfänger",
    # payees
    "Name": "Name", "Bank": "Bank", "Bank (optional)": "Bank (optional)", "Save payee": "Empfänger speichern",
    # scheduled
    "Scheduled payments": "Daueraufträge", "Schedule a payment": "Zahlung planen", "Payee": "Empfänger",
    "Repeats": "Wiederholung", "Next date": "Nächste Ausführung", "Status": "Status", "Actions": "Aktionen",
    "Edit": "Bearbeiten", "Edit payment to {name}": "Zahlung an {name} bearbeiten",
    "Cancel payment to {name}": "Zahlung an {name} stornieren", "once": "einmalig", "weekly": "wöchentlich",
    "monthly": "monatlich", "active": "aktiv", "cancelled": "storniert", "Once": "Einmalig", "Weekly": "Wöchentlich",
    "Monthly": "Monatlich", "First payment date": "Datum der ersten Zahlung",
    "Edit scheduled payment": "Dauerauftrag bearbeiten", "Cancel scheduled payment": "Dauerauftrag stornieren",
    "Cancel the {frequency} payment of {amount} to {name}?": "Die {frequency} Zahlung von {amount} an {name} stornieren?",
    "Cancel payment": "Zahlung stornieren", "Keep it": "Behalten",
    # cards
    "Reported lost: this card is blocked for good.": "Als verloren gemeldet: Diese Karte ist dauerhaft gesperrt.",
    "Expires {date}": "Gültig bis {date}", "Frozen: tap to unfreeze": "Gesperrt: tippen zum Entsperren",
    "Freeze card": "Karte sperren", "Freeze {name}": "{name} sperren", "Daily spending limit (€)": "Tägliches Ausgabenlimit (€)",
    "Online payments": "Onlinezahlungen", "Report lost or stolen": "Verlust oder Diebstahl melden",
    "Report {name} ···· {last4} lost?": "{name} ···· {last4} als verloren melden?",
    "The card is blocked for good and cannot be unfrozen; a new one is sent by post.":
        "Die Karte wird dauerhaft gesperrt und kann nicht entsperrt werden; eine neue kommt per Post.",
    "Block card": "Karte sperren", "Keep card": "Karte behalten", "Report a card lost": "Karte als verloren melden",
    # security, messages
    "Change password": "Passwort ändern", "Current password": "Aktuelles Passwort", "New password": "Neues Passwort",
    "Repeat new password": "Neues Passwort wiederholen",
    "Last changed {stamp}. At least 10 characters, with a letter and a digit.":
        "Zuletzt geändert am {stamp}. Mindestens 10 Zeichen, mit einem Buchstaben und einer Ziffer.",
    "2-step verification": "Zwei-Schritt-Verifizierung",
    "On: a code is sent to your phone at each sign-in.": "An: Bei jeder Anmeldung wird ein Code an Ihr Telefon gesendet.",
    "Off.": "Aus.", "Turn off 2-step verification": "Zwei-Schritt-Verifizierung ausschalten",
    "Turn on 2-step verification": "Zwei-Schritt-Verifizierung einschalten", "Your password was changed.": "Ihr Passwort wurde geändert.",
    "Write to support": "An den Support schreiben", "Subject": "Betreff", "Message": "Nachricht", "Send": "Senden", "You": "Sie",
    # refusals
    "No such account.": "Kein solches Konto.", "No such transaction.": "Kein solcher Umsatz.",
    "No such transfer.": "Keine solche Überweisung.", "No such scheduled payment.": "Kein solcher Dauerauftrag.",
    "No such card.": "Keine solche Karte.",
    "{field}: enter an amount such as 125.50 (digits, at most two decimals).":
        "{field}: Geben Sie einen Betrag wie 125,50 ein (Ziffern, höchstens zwei Nachkommastellen).",
    "{field} must be more than €0.00.": "{field} muss größer als 0,00 € sein.",
    "{field}: enter a date as YYYY-MM-DD.": "{field}: Geben Sie ein Datum als JJJJ-MM-TT ein.",
    "Minimum amount": "Mindestbetrag", "Maximum amount": "Höchstbetrag", "Daily spending limit": "Tägliches Ausgabenlimit",
    "Choose a category from the list, not {category!r}.": "Wählen Sie eine Kategorie aus der Liste, nicht {category!r}.",
    "Choose one of the categories: {categories}.": "Wählen Sie eine der Kategorien: {categories}.",
    "A statement month is written YYYY-MM.": "Ein Auszugsmonat wird JJJJ-MM geschrieben.",
    "There is no statement for {month}.": "Für {month} gibt es keinen Kontoauszug.",
    "Transfers cannot be made from a credit card account.": "Von einem Kreditkartenkonto sind keine Überweisungen möglich.",
    "Choose a different account to send the money to.": "Wählen Sie ein anderes Konto als Ziel.",
    "Insufficient funds: {name} holds {balance}, less than {amount}.":
        "Deckung nicht ausreichend: {name} hat {balance}, weniger als {amount}.",
    "This payment is over your daily limit for payments to payees: {left} left of {limit} today.":
        "Diese Zahlung überschreitet Ihr Tageslimit für Zahlungen an Empfänger: heute noch {left} von {limit}.",
    "Choose the account to pay from.": "Wählen Sie das Konto, von dem gezahlt wird.",
    "Choose who to pay: one of your accounts or a saved payee.":
        "Wählen Sie, an wen gezahlt wird: eines Ihrer Konten oder einen gespeicherten Empfänger.",
    "A reference can be at most 140 characters long.": "Ein Verwendungszweck hat höchstens 140 Zeichen.",
    "This transfer is already {state}.": "Diese Überweisung ist bereits {state}.",
    "This transfer is already {state}: it cannot be cancelled.":
        "Diese Überweisung ist bereits {state}: Sie kann nicht storniert werden.",
    "pending": "ausstehend", "completed": "ausgeführt",
    "Enter the payee's name (at most 70 characters).": "Geben Sie den Namen des Empfängers ein (höchstens 70 Zeichen).",
    "Enter an IBAN: two letters, two check digits, then the account number (15-34 characters).":
        "Geben Sie eine IBAN ein: zwei Buchstaben, zwei Prüfziffern, dann die Kontonummer (15–34 Zeichen).",
    "That IBAN's check digits do not match: check it for a typing mistake.":
        "Die Prüfziffern dieser IBAN stimmen nicht: Prüfen Sie sie auf Tippfehler.",
    "A payee with that IBAN is already saved.": "Ein Empfänger mit dieser IBAN ist bereits gespeichert.",
    "This scheduled payment was cancelled: it cannot be edited.":
        "Dieser Dauerauftrag wurde storniert: Er kann nicht bearbeitet werden.",
    "Choose a saved payee.": "Wählen Sie einen gespeicherten Empfänger.",
    "Choose how often: once, weekly or monthly.": "Wählen Sie, wie oft: einmalig, wöchentlich oder monatlich.",
    "The first payment date must be after today.": "Die erste Zahlung muss nach heute liegen.",
    "This scheduled payment is already cancelled.": "Dieser Dauerauftrag ist bereits storniert.",
    "This card was reported lost: it cannot be unfrozen.": "Diese Karte wurde als verloren gemeldet: Sie kann nicht entsperrt werden.",
    "This card was reported lost: its settings cannot change.":
        "Diese Karte wurde als verloren gemeldet: Ihre Einstellungen können sich nicht ändern.",
    "The daily spending limit can be at most {limit}.": "Das tägliche Ausgabenlimit beträgt höchstens {limit}.",
    "This card is already reported lost.": "Diese Karte ist bereits als verloren gemeldet.",
    "The current password is not right.": "Das aktuelle Passwort ist nicht richtig.",
    "The new password needs at least 10 characters, with a letter and a digit.":
        "Das neue Passwort braucht mindestens 10 Zeichen, mit einem Buchstaben und einer Ziffer.",
    "The two new passwords differ.": "Die beiden neuen Passwörter unterscheiden sich.",
    "The new password must differ from the current one.": "Das neue Passwort muss sich vom aktuellen unterscheiden.",
    "A message needs a subject and some text.": "Eine Nachricht braucht einen Betreff und einen Text.",
    "A subject is at most 120 characters, a message at most 4,000.":
        "Ein Betreff hat höchstens 120 Zeichen, eine Nachricht höchstens 4.000.",
    # transaction categories (the stored value is the English key; only its label changes)
    "Income": "Einkommen", "Rent": "Miete", "Utilities": "Nebenkosten", "Groceries": "Lebensmittel",
    "Dining": "Restaurants", "Coffee": "Kaffee", "Transport": "Verkehr", "Shopping": "Einkäufe", "Health": "Gesundheit",
    "Entertainment": "Unterhaltung", "Travel": "Reisen", "Subscriptions": "Abos", "Transfers": "Überweisungen",
    "Fees": "Gebühren", "Other": "Sonstiges",
}


def money(cents: int, locale: str) -> str:
    """Cents as the bank shows them: `€1,234.56` / `-€12.00` in en-US, `1.234,56 €` / `-12,00 €` in de-DE."""
    sign = "-" if cents < 0 else ""
    if locale == "de-DE":
        return f"{sign}{format_number(abs(cents) / 100, locale, decimals=2)}\u00a0€"
    return f"{sign}€{abs(cents) // 100:,}.{abs(cents) % 100:02d}"


def day(iso: str, locale: str) -> str:
    """A stored `YYYY-MM-DD` (or the date part of a stamp) as the locale writes it; en-US keeps
    the ISO date its tasks were written against."""
    if locale == "en-US":
        return iso[:10]
    try:
        return format_day(dt.date.fromisoformat(iso[:10]), locale, with_year=True)
    except ValueError:
        return iso[:10]


def stamp(value: str, locale: str) -> str:
    """A stored `YYYY-MM-DD HH:MM` stamp: as stored in en-US, `02.03.2026 14:05` in de-DE."""
    if locale == "en-US":
        return value
    return f"{day(value, locale)}{value[10:]}"
