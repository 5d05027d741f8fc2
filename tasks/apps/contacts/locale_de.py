"""The contacts CRM's German UI text (English UI text -> German), beside the shared catalogue of
`cua.tasks.apps.i18n`. Names, companies, tags, industries and cities are data, never translated;
a status or stage shows translated while its value (what forms post and judges read) stays."""

from __future__ import annotations

DE: dict[str, str] = {
    # navigation, titles
    "Contacts": "Kontakte", "Companies": "Unternehmen", "Deals": "Deals", "Not found": "Nicht gefunden",
    "No such contact.": "Kein solcher Kontakt.", "No such company.": "Kein solches Unternehmen.",
    "New contact": "Neuer Kontakt", "Edit contact": "Kontakt bearbeiten", "Edit": "Bearbeiten", "Delete…": "Löschen…",
    "Delete": "Löschen", "Cancel": "Abbrechen", "Save": "Speichern", "Confirm delete": "Löschen bestätigen",
    # statuses and stages (shown; their values stay)
    "lead": "Lead", "prospect": "Interessent", "customer": "Kunde", "churned": "Abgewandert",
    "qualification": "Qualifizierung", "proposal": "Angebot", "negotiation": "Verhandlung", "won": "Gewonnen",
    "lost": "Verloren", "all": "Alle",
    # the table
    "Search name, email, company, phone": "Name, E-Mail, Unternehmen, Telefon suchen", "Search contacts": "Kontakte suchen",
    "Owner": "Betreuer", "Tag": "Schlagwort", "Status": "Status", "Per page": "Pro Seite", "Any": "Alle",
    "Apply": "Anwenden", "Reset": "Zurücksetzen", "{n} selected": "{n} ausgewählt", "Choose owner…": "Betreuer wählen…",
    "Set owner": "Betreuer setzen", "Choose tag…": "Schlagwort wählen…", "Add tag": "Schlagwort hinzufügen",
    "Remove tag": "Schlagwort entfernen", "Select all on this page": "Alle auf dieser Seite auswählen",
    "Select {name}": "{name} auswählen", "Name": "Name", "Company": "Unternehmen", "Email": "E-Mail", "Phone": "Telefon",
    "Tags": "Schlagwörter", "Created": "Angelegt", "{first}–{last} of {total}": "{first}–{last} von {total}",
    "‹ Prev": "‹ Zurück", "Next ›": "Weiter ›", "Pages": "Seiten",
    # flash messages
    "Select at least one contact.": "Wählen Sie mindestens einen Kontakt.", "Choose an owner first.": "Wählen Sie zuerst einen Betreuer.",
    "Owner set to {owner} for {n} contact(s).": "Betreuer {owner} für {n} Kontakt(e) gesetzt.",
    "Choose a tag first.": "Wählen Sie zuerst ein Schlagwort.", "Tag {tag} added to {n} contact(s).": "Schlagwort {tag} zu {n} Kontakt(en) hinzugefügt.",
    "Tag {tag} removed from {n} contact(s).": "Schlagwort {tag} von {n} Kontakt(en) entfernt.",
    "Unknown bulk action.": "Unbekannte Sammelaktion.", "Contact created.": "Kontakt angelegt.", "Contact saved.": "Kontakt gespeichert.",
    "Contact deleted.": "Kontakt gelöscht.",
    # one contact
    "Title": "Position", "No deals.": "Keine Deals.", "Deal": "Deal", "Amount": "Betrag", "Stage": "Phase",
    "Close date": "Abschlussdatum", "Close": "Abschluss",
    "Delete {name}? Their deals stay, without a contact.": "{name} löschen? Die Deals bleiben, ohne Kontakt.",
    # the form
    "First name": "Vorname", "Last name": "Nachname", "Job title": "Position", "No company": "Kein Unternehmen",
    "Please fix {n} field(s) below.": "Bitte korrigieren Sie {n} Feld(er) unten.",
    "First name is required.": "Der Vorname fehlt.", "Last name is required.": "Der Nachname fehlt.",
    "Enter a valid email address, like name@example.com.": "Geben Sie eine gültige E-Mail-Adresse ein, etwa name@example.com.",
    "Enter a valid phone number: 7 to 15 digits, optionally with +, spaces, dashes or parentheses.":
        "Geben Sie eine gültige Telefonnummer ein: 7 bis 15 Ziffern, wahlweise mit +, Leerzeichen, Bindestrichen oder Klammern.",
    "Choose an owner.": "Wählen Sie einen Betreuer.", "Choose a status.": "Wählen Sie einen Status.",
    # companies and deals
    "Industry": "Branche", "City": "Stadt", "Open pipeline": "Offene Pipeline", "People ({n})": "Personen ({n})",
    "Deals ({n})": "Deals ({n})", "Contact": "Kontakt", "Stage of {name}": "Phase von {name}", "{n} deals · {total}": "{n} Deals · {total}",
}
