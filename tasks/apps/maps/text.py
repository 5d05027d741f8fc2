"""Waypoint's UI in en-US and de-DE: its own catalogue (beside the shared one of
`cua.tasks.apps.i18n`), localised numbers, distances, durations, clock times and weekdays,
and the inline SVG icons. A place's own data (its name, address, a review) is never
translated; oracles select by `data-` attributes and roles, never by this text."""

from __future__ import annotations

import datetime as dt

from cua.tasks.apps.i18n import format_date, format_number
from cua.tasks.apps.i18n import translate as shared_translate

__all__ = ["CATEGORY_LABELS", "CUISINE_LABELS", "ICONS", "MODE_LABELS", "clock", "date", "distance", "duration", "number",
           "translate", "weekday"]

CATEGORY_LABELS = {"restaurant": "Restaurant", "cafe": "Café", "bar": "Bar", "bakery": "Bakery", "pharmacy": "Pharmacy",
                   "supermarket": "Supermarket", "museum": "Museum", "park": "Park", "hotel": "Hotel", "gas": "Gas station",
                   "bookstore": "Bookstore", "gym": "Gym", "bank": "Bank", "cinema": "Cinema", "library": "Library",
                   "hospital": "Hospital", "florist": "Florist", "hardware": "Hardware store", "": ""}
CUISINE_LABELS = {"american": "American", "chinese": "Chinese", "ethiopian": "Ethiopian", "french": "French", "greek": "Greek",
                  "indian": "Indian", "italian": "Italian", "japanese": "Japanese", "korean": "Korean", "lebanese": "Lebanese",
                  "mexican": "Mexican", "spanish": "Spanish", "thai": "Thai", "turkish": "Turkish", "vietnamese": "Vietnamese", "": ""}
MODE_LABELS = {"drive": "Drive", "transit": "Transit", "walk": "Walk", "bike": "Bike"}

_DE: dict[str, str] = {
    # chrome and navigation
    "Explore": "Entdecken", "Directions": "Route", "Saved": "Gespeichert", "Contributions": "Beiträge", "History": "Verlauf",
    "Search Waypoint": "Waypoint durchsuchen", "Search places, categories, cuisines": "Orte, Kategorien, Küchen suchen",
    "Cannot do that": "Das geht nicht", "Back to the map": "Zurück zur Karte", "Map of Port Alder": "Karte von Port Alder",
    "Places": "Orte", "Map": "Karte", "Results": "Ergebnisse", "results": "Ergebnisse", "distances from": "Entfernungen ab",
    "No places match.": "Keine passenden Orte.", "Recent": "Zuletzt", "Categories": "Kategorien", "Filters": "Filter",
    "What": "Was", "Category": "Kategorie", "Cuisine": "Küche", "Open now": "Jetzt geöffnet", "Rating": "Bewertung",
    "Price": "Preis", "Distance": "Entfernung", "From": "Von", "To": "Nach", "Sort by": "Sortieren nach",
    "Relevance": "Relevanz", "Any category": "Alle Kategorien", "Any cuisine": "Alle Küchen", "Any rating": "Jede Bewertung",
    "Any price": "Jeder Preis", "Any distance": "Jede Entfernung", "Home": "Zuhause", "Work": "Arbeit", "Price level": "Preisniveau",
    "Rated": "Bewertet mit", "of 5": "von 5",
    # statuses and hours
    "Permanently closed": "Dauerhaft geschlossen", "Temporarily closed": "Vorübergehend geschlossen", "Open 24 hours": "24 Stunden geöffnet",
    "Open": "Geöffnet", "closes": "schließt um", "Closed": "Geschlossen", "opens": "öffnet", "Opening hours": "Öffnungszeiten",
    "Hours": "Öffnungszeiten", "Popular times": "Stoßzeiten", "Day": "Tag",
    # place page
    "Place actions": "Aktionen", "Save": "Speichern", "Share": "Teilen", "Edit my review": "Meine Rezension bearbeiten",
    "Write a review": "Rezension schreiben", "Suggest an edit": "Änderung vorschlagen", "Saved in": "Gespeichert in",
    "Address": "Adresse", "Phone": "Telefon", "Status": "Status", "Photo": "Foto", "Photos": "Fotos", "Your review": "Ihre Rezension",
    "Edit": "Bearbeiten", "Delete": "Löschen", "Showing": "Angezeigt:", "of": "von", "reviews": "Rezensionen", "Reviews": "Rezensionen",
    "From home, leaving now": "Ab Zuhause, Abfahrt jetzt",
    # save
    "Save to lists": "In Listen speichern", "Your lists": "Ihre Listen", "New list": "Neue Liste",
    "Note (for lists it is added to now)": "Notiz (für die Listen, in die der Ort jetzt kommt)", "Cancel": "Abbrechen",
    "No such list.": "Keine solche Liste.", "A list with that name exists already: tick it instead.":
        "Eine Liste mit diesem Namen gibt es schon: bitte ankreuzen.", "Favourites": "Favoriten", "Want to go": "Möchte ich hin",
    # review
    "Choose from 1 to 5 stars.": "Wählen Sie 1 bis 5 Sterne.", "stars": "Sterne", "star": "Stern", "Your rating": "Ihre Bewertung",
    "Posted publicly as": "Öffentlich gepostet als", "Post": "Posten", "Delete your review?": "Ihre Rezension löschen?",
    "You have not reviewed this place.": "Sie haben diesen Ort nicht bewertet.",
    # suggest
    "Edits are checked before they show on the map.": "Änderungen werden geprüft, bevor sie auf der Karte erscheinen.",
    "What is wrong?": "Was stimmt nicht?", "Opens": "Öffnet", "Closes": "Schließt", "Closed all day": "Ganztägig geschlossen",
    "Correct phone number": "Richtige Telefonnummer", "Note for the reviewers (optional)": "Notiz für die Prüfer (optional)",
    "Send": "Senden", "Choose the day the hours are for.": "Wählen Sie den Tag der Öffnungszeiten.",
    "Choose what to correct: hours or phone.": "Wählen Sie, was zu korrigieren ist: Öffnungszeiten oder Telefon.",
    "Enter times as HH:MM (24-hour), e.g. 09:30.": "Zeiten als HH:MM (24 Stunden), z. B. 09:30.",
    "Enter a phone number of 10 digits, area code first (e.g. 207-555-0142).":
        "Telefonnummer mit 10 Ziffern, Vorwahl zuerst (z. B. 207-555-0142).",
    "That is the number shown already.": "Diese Nummer wird bereits angezeigt.",
    # share
    "Link": "Link", "Copy link": "Link kopieren", "Send to (email)": "Senden an (E-Mail)", "Message (optional)": "Nachricht (optional)",
    "Done": "Fertig", "Link copied.": "Link kopiert.", "Sent to": "Gesendet an",
    "Enter one email address, e.g. sam@example.com.": "Geben Sie eine E-Mail-Adresse ein, z. B. sam@example.com.",
    "Choose how to share: copy the link or send it by email.": "Wählen Sie: Link kopieren oder per E-Mail senden.",
    # directions
    "Travel mode": "Verkehrsmittel", "Travel modes": "Verkehrsmittel", "Drive": "Auto", "Transit": "ÖPNV", "Walk": "Zu Fuß",
    "Bike": "Fahrrad", "Avoid tolls": "Mautstraßen vermeiden", "Avoid highways": "Schnellstraßen vermeiden",
    "Leave at (empty: now)": "Abfahrt (leer: jetzt)", "Get directions": "Route berechnen", "No route": "Keine Route",
    "No route with these options.": "Keine Route mit diesen Optionen.", "This route has tolls.": "Diese Route ist mautpflichtig.",
    "This route uses the expressway.": "Diese Route nutzt die Schnellstraße.",
    "Includes time to find parking": "Inklusive Parkplatzsuche", "leave": "Abfahrt", "arrive": "Ankunft",
    "towards": "Richtung", "stops": "Haltestellen", "stop": "Haltestelle", "Head": "Richtung", "Turn left onto": "Links abbiegen auf",
    "Turn right onto": "Rechts abbiegen auf", "Continue onto": "Weiter auf", "on": "auf", "Arrive at": "Ankunft bei",
    "north": "Norden", "south": "Süden", "east": "Osten", "west": "Westen", "Steps": "Schritte",
    "Start and destination are the same place.": "Start und Ziel sind derselbe Ort.",
    "Enter the departure as a date and time.": "Abfahrt als Datum und Uhrzeit eingeben.",
    "Timetables reach 60 days from today.": "Fahrpläne reichen 60 Tage ab heute.",
    # lists
    "places": "Orte", "Name": "Name", "Description (optional)": "Beschreibung (optional)", "Create list": "Liste anlegen",
    "Give the list a name.": "Geben Sie der Liste einen Namen.", "A list with that name exists already.":
        "Eine Liste mit diesem Namen gibt es schon.", "Select": "Auswählen", "Note": "Notiz", "Save note": "Notiz speichern",
    "Save note for": "Notiz speichern für", "No places in this list yet.": "Noch keine Orte in dieser Liste.",
    "Remove selected": "Auswahl entfernen", "Delete list": "Liste löschen", "Delete this list?": "Diese Liste löschen?",
    "Select the places to remove first.": "Wählen Sie zuerst die zu entfernenden Orte.",
    "That place is not in this list.": "Dieser Ort ist nicht in der Liste.",
    "Favourites and Want to go cannot be deleted.": "Favoriten und „Möchte ich hin“ können nicht gelöscht werden.",
    # contributions and history
    "Thanks: your edit is pending review.": "Danke: Ihre Änderung wird geprüft.", "Withdraw": "Zurückziehen",
    "Your reviews": "Ihre Rezensionen", "Your suggested edits": "Ihre Änderungsvorschläge", "Pending": "Ausstehend",
    "Applied": "Übernommen", "Withdrawn": "Zurückgezogen", "No such edit.": "Keine solche Änderung.",
    "Only a pending edit can be withdrawn.": "Nur ausstehende Änderungen können zurückgezogen werden.",
    "No history.": "Kein Verlauf.", "Clear history": "Verlauf löschen", "Recent searches and directions": "Letzte Suchen und Routen",
    "No such place.": "Kein solcher Ort.", "At most 2000 characters.": "Höchstens 2000 Zeichen.",
    # categories and cuisines
    "Restaurant": "Restaurant", "Café": "Café", "Bar": "Bar", "Bakery": "Bäckerei", "Pharmacy": "Apotheke", "Supermarket": "Supermarkt",
    "Museum": "Museum", "Park": "Park", "Hotel": "Hotel", "Gas station": "Tankstelle", "Bookstore": "Buchhandlung", "Gym": "Fitnessstudio",
    "Bank": "Bank", "Cinema": "Kino", "Library": "Bibliothek", "Hospital": "Krankenhaus", "Florist": "Blumenladen",
    "Hardware store": "Baumarkt", "American": "Amerikanisch", "Chinese": "Chinesisch", "Ethiopian": "Äthiopisch", "French": "Französisch",
    "Greek": "Griechisch", "Indian": "Indisch", "Italian": "Italienisch", "Japanese": "Japanisch", "Korean": "Koreanisch",
    "Lebanese": "Libanesisch", "Mexican": "Mexikanisch", "Spanish": "Spanisch", "Thai": "Thailändisch", "Turkish": "Türkisch",
    "Vietnamese": "Vietnamesisch",
}

_WEEKDAYS = {"en-US": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
             "de-DE": ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"]}
_SHORT = {"en-US": ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"], "de-DE": ["Mo", "Di", "Mi", "Do", "Fr", "Sa", "So"]}


def translate(locale: str, text: str) -> str:
    """`text` in `locale`: Waypoint's own catalogue, then the shared one, else English."""
    if locale == "de-DE" and text in _DE:
        return _DE[text]
    return shared_translate(locale, text)


def number(value: float, locale: str, decimals: int = 0) -> str:
    return format_number(value, locale, decimals=decimals)


def distance(metres: float, locale: str) -> str:
    """`850 m`, `2.4 km` (`2,4 km` in de-DE)."""
    if metres < 1000:
        return f"{int(round(metres / 10) * 10)} m"
    return f"{number(metres / 1000, locale, 1)} km"


def duration(minutes: int, locale: str) -> str:
    """`23 min`, `1 hr 5 min` (`1 Std. 5 Min.` in de-DE)."""
    h, m = divmod(int(minutes), 60)
    if locale == "de-DE":
        return f"{h} Std. {m} Min." if h else f"{m} Min."
    return f"{h} hr {m} min" if h else f"{m} min"


def clock(minutes: int, locale: str) -> str:
    """A time of day: `9:30 AM` in en-US, `09:30` in de-DE."""
    h, m = divmod(int(minutes) % 1440, 60)
    if locale == "de-DE":
        return f"{h:02d}:{m:02d}"
    return f"{(h % 12) or 12}:{m:02d} {'AM' if h < 12 else 'PM'}"


def weekday(day: int, locale: str, *, short: bool = False) -> str:
    names = (_SHORT if short else _WEEKDAYS).get(locale, _SHORT["en-US"] if short else _WEEKDAYS["en-US"])
    return names[day % 7]


def date(stamp: str, locale: str) -> str:
    return format_date(dt.date.fromisoformat(stamp[:10]), locale)


def _icon(path: str) -> str:
    return (f'<svg class="icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">'
            f'<path d="{path}"/></svg>')


ICONS = {
    "restaurant": _icon("M7 2v9a2 2 0 0 0 2 2v9h2V2H9v7H8V2zm8 0c-1.7 0-3 2-3 5v6h2v9h2V2z"),
    "cafe": _icon("M4 8h13v5a5 5 0 0 1-5 5H9a5 5 0 0 1-5-5zm13 1h2a2 2 0 0 1 0 4h-2zM5 20h12v2H5z"),
    "pharmacy": _icon("M10 3h4v7h7v4h-7v7h-4v-7H3v-4h7z"),
    "museum": _icon("M12 2 2 7v2h20V7zM4 10h2v8H4zm5 0h2v8H9zm4 0h2v8h-2zm5 0h2v8h-2zM2 19h20v3H2z"),
    "hotel": _icon("M3 5h2v8h6V7h8a3 3 0 0 1 3 3v9h-2v-3H5v3H3zm4 2a2 2 0 1 1 0 4 2 2 0 0 1 0-4z"),
    "gas": _icon("M4 3h9v18H4zm2 2v5h5V5zm9 3 3 3v7a1 1 0 0 0 2 0v-8l-3-3 1-1 4 4v8a3 3 0 0 1-6 0v-6z"),
    "park": _icon("M12 2 6 11h3l-4 6h6v5h2v-5h6l-4-6h3z"),
    "supermarket": _icon("M3 4h3l3 10h9l3-8H8M9 18a2 2 0 1 0 0 4 2 2 0 0 0 0-4zm9 0a2 2 0 1 0 0 4 2 2 0 0 0 0-4z"),
    "directions": _icon("M12 2 2 12l10 10 10-10zm1 6 4 4-4 4v-3H9v3H7v-5h6z"),
    "save": _icon("M6 2h12v20l-6-4-6 4z"),
    "share": _icon("M18 16a3 3 0 0 0-2.4 1.2L8.9 13.6a3 3 0 0 0 0-1.2l6.7-3.6A3 3 0 1 0 15 7l-6.7 3.6a3 3 0 1 0 0 4.8L15 19a3 3 0 1 0 3-3z"),
    "star": _icon("m12 2 3 7 7 .6-5.3 4.7L18 21l-6-3.7L6 21l1.3-6.7L2 9.6 9 9z"),
    "edit": _icon("M3 17v4h4L18 10l-4-4zM20 8l-4-4 2-2 4 4z"),
    "search": _icon("M10 2a8 8 0 0 1 6.3 12.9l5.4 5.4-1.4 1.4-5.4-5.4A8 8 0 1 1 10 2zm0 2a6 6 0 1 0 0 12 6 6 0 0 0 0-12z"),
    "drive": _icon("M5 11 7 5h10l2 6v8h-2v-2H7v2H5zm2 0h10l-1-4H8zm0 2a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3zm10 0a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3z"),
    "transit": _icon("M6 2h12a2 2 0 0 1 2 2v12a3 3 0 0 1-2 2.8l2 3.2h-2.5l-1.8-3H8.3l-1.8 3H4l2-3.2A3 3 0 0 1 4 16V4a2 2 0 0 1 2-2zm0 3v6h12V5zm2 9a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3zm8 0a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3z"),
    "walk": _icon("M13 2a2 2 0 1 1 0 4 2 2 0 0 1 0-4zm-2 5h3l3 5h3v2h-4l-1.5-2.5-1 4.5 3 3v5h-2v-4l-3-3-1 5H8l2-10-2 1v3H6V9z"),
    "bike": _icon("M5 12a4 4 0 1 0 0 8 4 4 0 0 0 0-8zm14 0a4 4 0 1 0 0 8 4 4 0 0 0 0-8zM12 5h3l2 5h-2l-.8-2H11l2 4-3 4H8l3-4-2-4H7V6h4z"),
}
