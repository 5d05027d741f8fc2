"""Skyway Travel's UI in German (de-DE), and how it writes times, fares and durations per locale.

The shared catalogue (`cua.tasks.apps.i18n`) holds the words every app shares; this one the
travel app's own. Airports, airlines, flight numbers, passengers and booking references are
data: never translated. The search form's date field takes ISO dates (YYYY-MM-DD) in every
locale, as the calendar writes them: only how the pages *show* a date changes.
"""

from __future__ import annotations

import datetime as dt

from cua.tasks.apps.i18n import format_date, format_money

__all__ = ["DE", "day", "duration", "moment", "price"]

DE: dict[str, str] = {
    "Search": "Suchen", "My trips": "Meine Reisen", "City or airport": "Stadt oder Flughafen", "From": "Von",
    "To": "Nach", "Departure date": "Abflugdatum", "Choose date": "Datum wählen", "Search flights": "Flüge suchen",
    "YYYY-MM-DD": "JJJJ-MM-TT", "Find a flight": "Flug finden", "Routes we fly": "Unsere Strecken",
    "Choose a departure airport from the list.": "Wählen Sie einen Abflughafen aus der Liste.",
    "Choose a destination airport from the list.": "Wählen Sie einen Zielflughafen aus der Liste.",
    "Enter the date as YYYY-MM-DD.": "Geben Sie das Datum als JJJJ-MM-TT ein.",
    "Nonstop": "Direkt", "1 stop": "1 Zwischenstopp", "Any time": "Beliebig", "Morning (6–12)": "Morgens (6–12)",
    "Afternoon (12–18)": "Nachmittags (12–18)", "Evening (18+)": "Abends (ab 18)", "Lowest price": "Niedrigster Preis",
    "Earliest departure": "Früheste Abflugzeit", "Shortest": "Kürzeste Dauer", "Filters": "Filter", "Stops": "Zwischenstopps",
    "Airlines": "Fluggesellschaften", "Max price ($)": "Höchstpreis ($)", "Departure": "Abflug", "Sort by": "Sortieren nach",
    "Apply": "Anwenden", "Select": "Auswählen", "No flights match these filters.": "Keine Flüge passen zu diesen Filtern.",
    "of": "von", "flights": "Flügen", "Modify search": "Suche ändern", "Flights": "Flüge", "Not found": "Nicht gefunden",
    "No such flight.": "Kein solcher Flug.", "ending": "mit Endziffern", "exp": "gültig bis", "A new card": "Neue Karte",
    "Card number": "Kartennummer", "MM/YY": "MM/JJ", "Expiry": "Gültig bis", "CVC": "Prüfnummer",
    "checked bag": "Aufgabegepäckstück", "checked bags": "Aufgabegepäckstücke", "Fare": "Flugpreis",
    "Choose your seat": "Sitzplatz wählen", "Rows": "Reihen", "have extra legroom": "bieten mehr Beinfreiheit",
    "Seat map": "Sitzplan", "Selected seat": "Gewählter Sitz", "none": "keiner", "Passenger": "Reisender",
    "First name": "Vorname", "Last name": "Nachname", "Email": "E-Mail", "Bags": "Gepäck", "Payment": "Zahlung",
    "Payment card": "Zahlungskarte", "Total": "Summe", "Pay and book": "Bezahlen und buchen", "Book": "Buchen",
    "Choose a seat on the seat map.": "Wählen Sie einen Sitz im Sitzplan.", "is already taken.": "ist bereits belegt.",
    "Seat": "Sitz", "Enter the passenger's first name.": "Geben Sie den Vornamen des Reisenden ein.",
    "Enter the passenger's last name.": "Geben Sie den Nachnamen des Reisenden ein.",
    "Enter a valid email address.": "Geben Sie eine gültige E-Mail-Adresse ein.",
    "Enter the new card's number and expiry (MM/YY).": "Geben Sie Nummer und Ablaufdatum (MM/JJ) der neuen Karte ein.",
    "Choose a payment card.": "Wählen Sie eine Zahlungskarte.", "Booking": "Buchung", "Route": "Strecke",
    "Departs": "Abflug", "Arrives": "Ankunft", "Flight": "Flug", "Status": "Status", "No trips yet.": "Noch keine Reisen.",
    "No such booking.": "Keine solche Buchung.", "Booking confirmed. Have a good trip!": "Buchung bestätigt. Gute Reise!",
    "Cancel booking…": "Buchung stornieren…", "Confirm cancellation": "Stornierung bestätigen",
    "Cancel booking": "Buchung stornieren", "The fare is not refundable.": "Der Flugpreis wird nicht erstattet.",
    "Yes, cancel it": "Ja, stornieren", "Keep booking": "Buchung behalten", "Paid with": "Bezahlt mit",
    "card ending": "Karte mit Endziffern", "All trips": "Alle Reisen", "confirmed": "bestätigt", "cancelled": "storniert",
    "Seats": "Sitze", "extra legroom": "mehr Beinfreiheit", "taken": "belegt", "Previous month": "Voriger Monat",
    "Next month": "Nächster Monat", "Search form": "Suchformular",
}


def price(dollars: int, locale: str) -> str:
    """A fare in whole dollars: `$1234` in en-US (as the tasks were written against), `1.234,00 $` in de-DE."""
    return f"${dollars}" if locale != "de-DE" else format_money(dollars * 100, locale, "USD")


def moment(iso: str, locale: str) -> str:
    """A departure or arrival: `2026-03-02 14:05` in en-US, `02.03.2026, 14:05` in de-DE."""
    if locale != "de-DE":
        return iso.replace("T", " ")
    return dt.datetime.fromisoformat(iso).strftime("%d.%m.%Y, %H:%M")


def day(iso: str, locale: str) -> str:
    """A travel day: `2026-03-02` in en-US, `2. März 2026` in de-DE."""
    return iso if locale != "de-DE" else format_date(dt.date.fromisoformat(iso[:10]), locale)


def duration(minutes: int, locale: str) -> str:
    """`2h 05m` in en-US, `2 Std. 05 Min.` in de-DE."""
    if locale == "de-DE":
        return f"{minutes // 60} Std. {minutes % 60:02d} Min."
    return f"{minutes // 60}h {minutes % 60:02d}m"
