"""Tally People's UI in German, and its money and dates as each locale writes them.

The shared catalogue (`cua.tasks.apps.i18n`) holds the other apps' words; this one holds
the HR app's, looked up first. A record's own text (a merchant, a report's title, a
person's name) is never translated: a task's instruction names it as stored.
"""

from __future__ import annotations

import datetime as dt

from cua.tasks.apps.i18n import format_date, format_number, translate

__all__ = ["CATEGORY_LABELS", "KIND_LABELS", "STATUS_LABELS", "long_date", "money", "short_date", "tr"]

CATEGORY_LABELS = {"airfare": "Airfare", "hotel": "Hotel", "taxi": "Taxi & rideshare", "meals": "Meals",
                   "client_entertainment": "Client entertainment", "office_supplies": "Office supplies",
                   "training": "Training & books", "phone_internet": "Phone & internet", "parking": "Parking"}
STATUS_LABELS = {"draft": "Draft", "submitted": "Submitted", "approved": "Approved", "rejected": "Rejected", "paid": "Paid",
                 "pending": "Pending", "cancelled": "Cancelled"}
KIND_LABELS = {"vacation": "Vacation", "sick": "Sick leave", "personal": "Personal day"}

_DE = {
    # navigation and chrome
    "Home": "Start", "Expenses": "Spesen", "Time off": "Abwesenheit", "Approvals": "Freigaben", "People": "Personen",
    "Org chart": "Organigramm", "Pay": "Gehalt", "Profile": "Profil", "Back": "Zurück", "Cannot do that": "Das geht nicht",
    "Not found": "Nicht gefunden", "Save": "Speichern", "Cancel": "Abbrechen", "Search": "Suchen", "Apply": "Anwenden",
    "Good morning": "Guten Morgen", "waiting for you": "warten auf Sie", "All": "Alle",
    # expenses
    "Expense reports": "Spesenabrechnungen", "New report": "Neue Abrechnung", "Report title": "Titel der Abrechnung",
    "Create report": "Abrechnung anlegen", "Title": "Titel", "Status": "Status", "Total": "Summe", "Lines": "Positionen",
    "Created": "Angelegt", "Submitted": "Eingereicht", "Approved": "Genehmigt", "Rejected": "Abgelehnt", "Paid": "Ausgezahlt",
    "Draft": "Entwurf", "Pending": "Ausstehend", "Cancelled": "Storniert", "Date": "Datum", "Merchant": "Händler",
    "Category": "Kategorie", "Amount": "Betrag", "Currency": "Währung", "In USD": "In USD", "Receipt": "Beleg",
    "Project": "Projekt", "Note": "Notiz", "Add line": "Position hinzufügen", "Add a line": "Position hinzufügen",
    "Edit line": "Position bearbeiten", "Edit": "Bearbeiten", "Delete": "Löschen", "Attach": "Anhängen",
    "Attach receipt": "Beleg anhängen", "Choose a receipt…": "Beleg wählen…", "attached": "angehängt", "missing": "fehlt",
    "none": "keiner", "Submit for approval": "Zur Genehmigung einreichen", "Recall": "Zurückziehen",
    "Reopen as draft": "Als Entwurf wieder öffnen", "Policy": "Richtlinie", "History": "Verlauf",
    "Fix these before you submit:": "Vor dem Einreichen beheben:", "Receipt missing": "Beleg fehlt",
    "Over the limit": "Über dem Limit", "No lines yet.": "Noch keine Positionen.", "Receipts inbox": "Beleg-Eingang",
    "Unmatched receipts": "Nicht zugeordnete Belege", "File": "Datei", "Rates": "Kurse",
    "Company rates to USD": "Firmenkurse in USD", "Limit per line": "Limit pro Position",
    "Receipt needed over": "Beleg nötig ab", "Decision": "Entscheidung", "Comment": "Kommentar", "by": "von",
    "created": "angelegt", "submitted": "eingereicht", "approved": "genehmigt", "rejected": "abgelehnt", "paid": "ausgezahlt",
    "recalled": "zurückgezogen", "reopened": "wieder geöffnet", "Employee": "Mitarbeiter:in", "Report": "Abrechnung",
    "Nothing here.": "Nichts da.", "Waiting for your manager": "Wartet auf Ihre Führungskraft",
    "Change the currency or amount on the line's edit page.": "Währung oder Betrag auf der Bearbeitungsseite der Position ändern.",
    # categories
    "Airfare": "Flug", "Hotel": "Hotel", "Taxi & rideshare": "Taxi & Fahrdienst", "Meals": "Verpflegung",
    "Client entertainment": "Kundenbewirtung", "Office supplies": "Büromaterial", "Training & books": "Fortbildung & Bücher",
    "Phone & internet": "Telefon & Internet", "Parking": "Parken",
    # time off
    "Balances": "Kontingente", "Vacation": "Urlaub", "Sick leave": "Krankheit", "Personal day": "Persönlicher Tag",
    "available": "verfügbar", "allowance": "Anspruch", "taken or booked": "genommen oder gebucht", "pending": "ausstehend",
    "Request time off": "Abwesenheit beantragen", "Type": "Art", "First day": "Erster Tag", "Last day": "Letzter Tag",
    "Send request": "Antrag senden", "Your requests": "Ihre Anträge", "Days": "Tage", "working days": "Arbeitstage",
    "Company holidays": "Firmenfeiertage", "Cancel request": "Antrag stornieren",
    "Weekends and company holidays are not counted.": "Wochenenden und Firmenfeiertage werden nicht gezählt.",
    # approvals
    "Expense reports to approve": "Freizugebende Spesenabrechnungen", "Time off to approve": "Freizugebende Abwesenheiten",
    "Approve": "Genehmigen", "Reject": "Ablehnen", "Open": "Öffnen", "Comment (required to reject)":
        "Kommentar (zum Ablehnen nötig)", "Inbox zero: nothing waits for you.": "Alles erledigt: nichts wartet auf Sie.",
    "Direct report": "Direkt unterstellt", "Review": "Prüfen", "Dates": "Zeitraum",
    # people
    "Directory": "Verzeichnis", "Search people": "Personen suchen", "Team": "Team", "Office": "Standort",
    "Manager": "Führungskraft", "Reports to": "Berichtet an", "Direct reports": "Direkt unterstellt", "Email": "E-Mail",
    "Phone": "Telefon", "Started": "Eintritt", "Country": "Land", "Any team": "Alle Teams", "Any office": "Alle Standorte",
    "people": "Personen", "Teams": "Teams", "Lead": "Leitung",
    # pay
    "Payslips": "Gehaltsabrechnungen", "Month": "Monat", "Pay day": "Zahltag", "Gross": "Brutto", "Deductions": "Abzüge",
    "Net": "Netto", "Federal income tax": "Bundeseinkommensteuer", "State income tax": "Einkommensteuer des Bundesstaats",
    "Social Security": "Sozialversicherung", "Medicare": "Medicare", "401(k)": "401(k)-Altersvorsorge",
    "Health insurance": "Krankenversicherung", "Net pay": "Nettolohn",
    # profile
    "My profile": "Mein Profil", "Address": "Adresse", "Street": "Straße", "City": "Ort", "Postal code": "Postleitzahl",
    "Emergency contact": "Notfallkontakt", "Name": "Name", "Relationship": "Beziehung", "Bank account": "Bankkonto",
    "Save address": "Adresse speichern", "Save contact": "Kontakt speichern",
    "To change your bank account, contact Payroll.": "Für ein anderes Bankkonto wenden Sie sich an die Gehaltsabrechnung.",
    "Saved.": "Gespeichert.",
    # refusals
    "Amount: enter a number such as 42.50 (at most two decimals).":
        "Betrag: eine Zahl wie 42,50 eingeben (höchstens zwei Nachkommastellen).",
    "Amount: it must be more than zero.": "Betrag: er muss größer als null sein.",
    "Date: an expense cannot be in the future.": "Datum: eine Ausgabe kann nicht in der Zukunft liegen.",
    "Date: expenses older than a year cannot be claimed.": "Datum: Ausgaben, die älter als ein Jahr sind, werden nicht erstattet.",
    "Merchant: required.": "Händler: erforderlich.", "Category: choose one from the list.": "Kategorie: eine aus der Liste wählen.",
    "Project: choose a project code from the list.": "Projekt: einen Projektcode aus der Liste wählen.",
    "Only a draft report can be changed. Recall it first.":
        "Nur ein Entwurf kann geändert werden. Ziehen Sie die Abrechnung zuerst zurück.",
    "Receipt: choose one of your receipts.": "Beleg: einen Ihrer Belege wählen.",
    "That receipt is already attached to another line.": "Dieser Beleg hängt schon an einer anderen Position.",
    "This line already has a receipt.": "Diese Position hat schon einen Beleg.",
    "Only a draft report can be submitted.": "Nur ein Entwurf kann eingereicht werden.",
    "Add at least one line before you submit.": "Vor dem Einreichen mindestens eine Position hinzufügen.",
    "Only a submitted report can be recalled.": "Nur eine eingereichte Abrechnung kann zurückgezogen werden.",
    "Only a rejected report can be reopened.": "Nur eine abgelehnte Abrechnung kann wieder geöffnet werden.",
    "Type: choose vacation, sick leave or a personal day.": "Art: Urlaub, Krankheit oder persönlichen Tag wählen.",
    "Last day: it comes before the first day.": "Letzter Tag: er liegt vor dem ersten Tag.",
    "First day: time off can be requested from today on.": "Erster Tag: Abwesenheit kann ab heute beantragt werden.",
    "Only a pending request can be cancelled here; ask your manager about an approved one.":
        "Nur ein ausstehender Antrag kann hier storniert werden; für einen genehmigten fragen Sie Ihre Führungskraft.",
    "You cannot approve or reject your own request: it goes to your manager.":
        "Eigene Anträge können Sie weder genehmigen noch ablehnen: sie gehen an Ihre Führungskraft.",
    "Only the employee's own manager can approve or reject this.":
        "Nur die Führungskraft der Person kann dies genehmigen oder ablehnen.",
    "Decision: approve or reject.": "Entscheidung: genehmigen oder ablehnen.",
    "Comment: say why you reject it; the employee sees your comment.":
        "Kommentar: sagen Sie, warum Sie ablehnen; die Person sieht Ihren Kommentar.",
    "No such expense report.": "Keine solche Spesenabrechnung.", "No such line.": "Keine solche Position.",
    "No such request.": "Kein solcher Antrag.", "No such person.": "Keine solche Person.", "Not found.": "Nicht gefunden.",
    "A payslip month is written YYYY-MM.": "Ein Abrechnungsmonat wird JJJJ-MM geschrieben.",
}


def tr(locale: str, text: str) -> str:
    """`text` in `locale`: this app's catalogue first, then the shared one."""
    if locale == "de-DE" and text in _DE:
        return _DE[text]
    return translate(locale, text)


_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "CAD": "CA$", "CHF": "CHF\u00a0"}


def money(cents: int, currency: str, locale: str) -> str:
    """`$1,234.56` / `CHF 80.00` in en-US, `1.234,56 $` in de-DE; a minus sign in front."""
    sign = "-" if cents < 0 else ""
    number = format_number(abs(cents) / 100, locale, decimals=2)
    symbol = _SYMBOLS.get(currency, currency + "\u00a0")
    if locale == "de-DE":
        return f"{sign}{number}\u00a0{symbol.strip()}"
    return f"{sign}{symbol}{number}"


def short_date(iso: str, locale: str) -> str:
    """A date in a table: `2026-03-02` in en-US (as the tasks write it), `02.03.2026` in de-DE."""
    if locale != "de-DE":
        return iso[:10]
    try:
        return dt.date.fromisoformat(iso[:10]).strftime("%d.%m.%Y")
    except ValueError:
        return iso


def long_date(iso: str, locale: str) -> str:
    """`March 2, 2026` / `2. März 2026`."""
    try:
        return format_date(dt.date.fromisoformat(iso[:10]), locale)
    except ValueError:
        return iso
