"""The bundled apps' UI in each locale of `cua.variant.LOCALES`: translated text and
localised dates, numbers and money.

Babel is not installed (and would be a large dependency for two locales), so this is a
small catalogue: English UI text -> its translation, and the few formats the apps show.
A text with no entry stays English (a record's own data -- a todo's title, a product's
name -- is never translated: the task's instruction names it). Judges read state, never
this text; oracles select by `data-` attributes, roles or the record's own text.
"""

from __future__ import annotations

import datetime as dt

__all__ = ["format_date", "format_day", "format_money", "format_number", "translate"]

_DE: dict[str, str] = {
    # shared chrome
    "Search": "Suchen", "Save": "Speichern", "Cancel": "Abbrechen", "Delete": "Löschen", "Delete…": "Löschen…",
    "Add": "Hinzufügen", "Apply": "Anwenden", "Not found": "Nicht gefunden", "Home": "Start", "OK": "OK",
    "Nothing here.": "Nichts da.",
    # todo
    "Lists": "Listen", "New list": "Neue Liste", "Create list": "Liste anlegen", "open": "offen", "total": "gesamt",
    "Open": "Offen", "Done": "Erledigt", "All": "Alle", "New todo": "Neue Aufgabe", "Due date": "Fällig am",
    "Priority": "Priorität", "Title": "Titel", "Due": "Fällig", "low": "niedrig", "normal": "normal", "high": "hoch",
    "Edit todo": "Aufgabe bearbeiten", "List": "Liste", "Tags (comma separated)": "Schlagwörter (durch Komma getrennt)",
    "Notes": "Notizen", "Keep it": "Behalten", "Confirm delete": "Löschen bestätigen", "Search todos": "Aufgaben suchen",
    "result(s) for": "Treffer für", "No such list.": "Keine solche Liste.", "No such todo.": "Keine solche Aufgabe.",
    # shop
    "Orders": "Bestellungen", "Cart": "Warenkorb", "Shop by category": "Nach Kategorie einkaufen",
    "Top rated": "Am besten bewertet", "Add to cart": "In den Warenkorb", "products": "Produkte",
    "Your cart": "Ihr Warenkorb", "Your cart is empty.": "Ihr Warenkorb ist leer.",
    "Continue shopping": "Weiter einkaufen", "Remove": "Entfernen", "Update cart": "Warenkorb aktualisieren",
    "Proceed to checkout": "Zur Kasse", "Checkout": "Kasse", "Shipping address": "Lieferadresse",
    "Delivery": "Versand", "Payment": "Zahlung", "Order summary": "Bestellübersicht", "Place order": "Bestellen",
    "Your orders": "Ihre Bestellungen", "Order": "Bestellung", "Placed": "Aufgegeben", "Search products": "Produkte suchen",
    "Subtotal": "Zwischensumme", "Shipping": "Versandkosten", "Total": "Summe", "Quantity": "Menge",
    "Price": "Preis", "Status": "Status", "Brand": "Marke", "Sort": "Sortierung", "Product": "Produkt",
    "In stock": "Auf Lager", "Out of stock": "Nicht auf Lager", "Reviews": "Bewertungen",
    "Sort by": "Sortieren nach", "In stock only": "Nur verfügbare", "Items": "Artikel", "items": "Artikel", "Featured": "Empfohlen",
    "Price: low to high": "Preis: aufsteigend", "Price: high to low": "Preis: absteigend",
    "Customer rating": "Kundenbewertung", "Name A–Z": "Name A–Z",
    # mail
    "Compose": "Verfassen", "Labels": "Labels", "Inbox": "Posteingang", "Starred": "Markiert", "Sent": "Gesendet",
    "Drafts": "Entwürfe", "Archive": "Archiv", "Trash": "Papierkorb", "Search mail": "E-Mails durchsuchen",
    "Mark read": "Als gelesen markieren", "Mark unread": "Als ungelesen markieren", "‹ Newer": "‹ Neuer",
    "Older ›": "Älter ›", "Select all": "Alle auswählen", "Reply": "Antworten", "Forward": "Weiterleiten",
    "Send": "Senden", "Save draft": "Entwurf speichern", "To": "An", "Subject": "Betreff", "From": "Von",
    "Type a query above.": "Oben einen Suchbegriff eingeben.", "No messages.": "Keine Nachrichten.",
    "Select": "Auswählen", "of": "von", "Add label": "Label hinzufügen", "Reply all": "Allen antworten", "Star": "Markieren",
    "Move to inbox": "In den Posteingang", "Delete forever": "Endgültig löschen", "Edit draft": "Entwurf bearbeiten",
    "New message": "Neue Nachricht", "Message": "Nachricht", "Discard": "Verwerfen", "Contacts": "Kontakte", "Mail": "E-Mail",
}

_CATALOGUES: dict[str, dict[str, str]] = {"de-DE": _DE}

_MONTHS = {"en-US": ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                     "October", "November", "December"],
           "de-DE": ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September",
                     "Oktober", "November", "Dezember"]}
_SHORT_DE = ["Jan.", "Feb.", "März", "Apr.", "Mai", "Juni", "Juli", "Aug.", "Sept.", "Okt.", "Nov.", "Dez."]


def translate(locale: str, text: str) -> str:
    """`text` in `locale`; English (the apps' own text) where the catalogue has no entry."""
    return _CATALOGUES.get(locale, {}).get(text, text)


def _separators(locale: str) -> tuple[str, str]:
    """(thousands, decimal) separators."""
    return (".", ",") if locale == "de-DE" else (",", ".")


def format_number(value: float, locale: str, *, decimals: int = 0) -> str:
    """`1,234.5` in en-US, `1.234,5` in de-DE."""
    text = f"{value:,.{decimals}f}"
    thousands, decimal = _separators(locale)
    return text.replace(",", "\0").replace(".", decimal).replace("\0", thousands)


def format_money(cents: int, locale: str, currency: str = "USD") -> str:
    """An amount in cents as the locale writes it: `$1,095.99` in en-US, `1.095,99 $` in de-DE
    (the currency stays the data's; only how it is written changes)."""
    symbol = {"USD": "$", "EUR": "€", "GBP": "£"}.get(currency, currency)
    number = format_number(cents / 100, locale, decimals=2)
    return f"{number}\u00a0{symbol}" if locale == "de-DE" else f"{symbol}{number}"


def format_date(day: dt.date, locale: str) -> str:
    """A full date: `March 2, 2026` in en-US, `2. März 2026` in de-DE."""
    month = _MONTHS.get(locale, _MONTHS["en-US"])[day.month - 1]
    return f"{day.day}. {month} {day.year}" if locale == "de-DE" else f"{month} {day.day}, {day.year}"


def format_day(day: dt.date, locale: str, *, with_year: bool) -> str:
    """A short date for a list: `Mar 02` / `2026-03-02` in en-US, `02. März` / `02.03.2026` in de-DE."""
    if locale == "de-DE":
        return day.strftime("%d.%m.%Y") if with_year else f"{day.day:02d}. {_SHORT_DE[day.month - 1]}"
    return day.strftime("%Y-%m-%d") if with_year else day.strftime("%b %d")
