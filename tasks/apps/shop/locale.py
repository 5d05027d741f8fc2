"""The shop's own UI text in German (de-DE): the wishlist, reviews and order cancellation.

The shared catalogue (`cua.tasks.apps.i18n`) holds the storefront's older words; the words of
these later features live here, beside the app that shows them. A text with a `{field}` is a
template: the app fills it after translating. Records (product names, review titles) stay as stored.
"""

from __future__ import annotations

__all__ = ["DE"]

DE: dict[str, str] = {
    # wishlist
    "Wishlist": "Wunschliste", "Your wishlist": "Ihre Wunschliste", "Add to wishlist": "Auf die Wunschliste",
    "Remove from wishlist": "Von der Wunschliste entfernen", "On your wishlist": "Auf Ihrer Wunschliste",
    "Move to cart": "In den Warenkorb legen", "Your wishlist is empty.": "Ihre Wunschliste ist leer.",
    "Added {day}": "Hinzugefügt am {day}",
    # reviews
    "Customer reviews": "Kundenrezensionen", "Write a review": "Rezension schreiben", "Edit your review": "Rezension bearbeiten",
    "Your review": "Ihre Rezension", "Your rating": "Ihre Bewertung", "Title": "Titel", "Review": "Rezension",
    "Submit review": "Rezension senden", "Save changes": "Änderungen speichern",
    "{avg} out of 5 · {count} ratings": "{avg} von 5 · {count} Bewertungen", "{n} of 5 stars": "{n} von 5 Sternen",
    "1 star": "1 Stern", "2 stars": "2 Sterne", "3 stars": "3 Sterne", "4 stars": "4 Sterne", "5 stars": "5 Sterne",
    "Review of {name}": "Rezension zu {name}", "Updated {day}": "Aktualisiert am {day}",
    "Give a title.": "Geben Sie einen Titel an.", "Write a few words.": "Schreiben Sie ein paar Worte.",
    "Choose 1 to 5 stars.": "Wählen Sie 1 bis 5 Sterne.",
    # orders and their states
    "Cancel order": "Bestellung stornieren", "This order was cancelled.": "Diese Bestellung wurde storniert.",
    "placed": "aufgegeben", "processing": "in Bearbeitung", "shipped": "versandt", "delivered": "zugestellt",
    "cancelled": "storniert",
    # refusals
    "Cannot do that": "Nicht möglich", "Back to the shop": "Zurück zum Shop",
    "No such product.": "Kein solches Produkt.", "No such order.": "Keine solche Bestellung.",
    "This order has already shipped and can no longer be cancelled.":
        "Diese Bestellung wurde bereits versandt und kann nicht mehr storniert werden.",
    "This order is already cancelled.": "Diese Bestellung ist bereits storniert.",
    "This product is out of stock.": "Dieses Produkt ist nicht auf Lager.",
    "That product is not on your wishlist.": "Dieses Produkt ist nicht auf Ihrer Wunschliste.",
}
