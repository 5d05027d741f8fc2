"""The health portal's UI in German (de-DE): English UI text -> its translation.

The shared catalogue (`cua.tasks.apps.i18n`) holds the chrome every app shares; this one
holds the portal's own words (coverage, claims, care). A record's own data -- a provider's
name, a drug, a claim number -- is never translated: a task's instruction names it.
"""

from __future__ import annotations

__all__ = ["german"]

_DE: dict[str, str] = {
    # navigation and furniture
    "Home": "Start", "Coverage": "Leistungen", "Find care": "Arztsuche", "Appointments": "Termine",
    "Prescriptions": "Rezepte", "Claims": "Abrechnungen", "Messages": "Nachrichten", "Lab results": "Laborwerte",
    "Family": "Familie", "Profile": "Profil", "Breadcrumb": "Brotkrumen", "Cannot do that": "Das geht nicht",
    "Back to your summary": "Zurück zur Übersicht", "Summary": "Übersicht", "Welcome back": "Willkommen zurück",
    "Shortcuts": "Schnellzugriff", "Coming up": "Demnächst", "Insurance card": "Versichertenkarte", "Documents": "Dokumente",
    "Save": "Speichern", "Search": "Suchen", "Send": "Senden", "Show": "Anzeigen", "Cancel": "Absagen", "None": "Keines",
    "Choose…": "Auswählen…", "Everyone": "Alle", "Family member": "Familienmitglied", "Name": "Name", "of": "von",
    "Upload": "Hochladen", "Total": "Summe", "Status": "Status", "To": "An", "About": "Betrifft", "Subject": "Betreff",
    "Message": "Nachricht", "You": "Sie", "messages": "Nachrichten", "providers": "Behandelnde", "Now": "Aktuell",
    # coverage
    "Your deductible this year": "Ihr Selbstbehalt in diesem Jahr", "In-network deductible": "Selbstbehalt im Netz",
    "Out-of-pocket maximum": "Höchstbetrag Eigenanteil", "Individual deductible": "Selbstbehalt (Person)",
    "Family deductible": "Selbstbehalt (Familie)", "Individual out-of-pocket maximum": "Höchstbetrag Eigenanteil (Person)",
    "Family out-of-pocket maximum": "Höchstbetrag Eigenanteil (Familie)", "Met": "Erreicht", "Remaining": "Verbleibend",
    "In network": "Im Netz", "Out of network": "Außerhalb des Netzes", "Group": "Gruppe", "Plan year": "Versicherungsjahr",
    "What you pay": "Was Sie zahlen", "Service": "Leistung", "Copay (in network)": "Zuzahlung (im Netz)",
    "Coinsurance (in network)": "Kostenbeteiligung (im Netz)", "Coinsurance (out of network)": "Kostenbeteiligung (außerhalb)",
    "Coinsurance applies after the deductible. Preventive care in network is covered in full.":
        "Die Kostenbeteiligung gilt nach dem Selbstbehalt. Vorsorge im Netz ist voll gedeckt.",
    "Primary care visit": "Hausarztbesuch", "Specialist visit": "Facharztbesuch", "Telehealth (video) visit": "Videosprechstunde",
    "Preventive care": "Vorsorge", "Urgent care": "Notfallpraxis", "Emergency room": "Notaufnahme", "Lab tests": "Laboruntersuchungen",
    "Imaging (MRI, CT)": "Bildgebung (MRT, CT)", "Physical therapy": "Physiotherapie", "Mental health visit": "Psychotherapie",
    "Generic drugs (30 days)": "Generika (30 Tage)", "Brand drugs (30 days)": "Markenpräparate (30 Tage)",
    "Member": "Versicherte Person", "Member ID": "Versichertennummer", "Primary care": "Hausarzt", "Specialist": "Facharzt",
    "Card": "Karte", "Relationship": "Beziehung", "Date of birth": "Geburtsdatum", "Deductible remaining": "Verbleibender Selbstbehalt",
    "self": "Hauptversicherte Person", "spouse": "Ehepartner/in", "child": "Kind",
    # find care
    "Any specialty": "Jedes Fachgebiet", "Any city": "Jede Stadt", "Any language": "Jede Sprache", "Any network": "Jedes Netz",
    "Any visit type": "Jede Terminart", "In person": "Vor Ort", "Video visit": "Videotermin", "Specialty": "Fachgebiet",
    "City": "Stadt", "Network": "Netz", "Language": "Sprache", "Visit type": "Terminart", "Languages": "Sprachen",
    "Next open times": "Nächste freie Termine", "No open times": "Keine freien Termine", "Open times": "Freie Termine",
    "Not accepting new patients": "Nimmt keine neuen Patienten an", "Emergency medicine": "Notfallmedizin",
    "Family Medicine": "Allgemeinmedizin", "Internal Medicine": "Innere Medizin", "Pediatrics": "Kinderheilkunde",
    "Dermatology": "Dermatologie", "Cardiology": "Kardiologie", "Endocrinology": "Endokrinologie",
    "Orthopedic Surgery": "Orthopädie", "Obstetrics & Gynecology": "Gynäkologie und Geburtshilfe", "Psychiatry": "Psychiatrie",
    "Physical Therapy": "Physiotherapie", "Ophthalmology": "Augenheilkunde", "Gastroenterology": "Gastroenterologie",
    "Neurology": "Neurologie", "Allergy & Immunology": "Allergologie und Immunologie", "Otolaryngology (ENT)": "HNO-Heilkunde",
    "English": "Englisch", "Spanish": "Spanisch", "Mandarin": "Mandarin", "Hindi": "Hindi", "Vietnamese": "Vietnamesisch",
    "Korean": "Koreanisch", "Arabic": "Arabisch", "Russian": "Russisch", "Tagalog": "Tagalog", "French": "Französisch",
    "Portuguese": "Portugiesisch", "Yoruba": "Yoruba",
    # booking and appointments
    "Book an appointment": "Termin buchen", "Book appointment": "Termin buchen", "Patient": "Patient/in",
    "Reason for visit": "Anlass des Besuchs", "Your appointment is booked.": "Ihr Termin ist gebucht.", "Upcoming": "Anstehend",
    "Past and cancelled": "Vergangen und abgesagt", "Nothing scheduled.": "Nichts geplant.", "Reschedule": "Verschieben",
    "Scheduled": "Geplant", "Completed": "Abgeschlossen", "Cancelled": "Abgesagt", "Choose a new time": "Neue Zeit wählen",
    "Move appointment": "Termin verschieben", "Keep current time": "Zeit beibehalten", "Cancel appointment": "Termin absagen",
    "Cancel this appointment?": "Diesen Termin absagen?", "Keep appointment": "Termin behalten", "Reason": "Grund",
    "Schedule conflict": "Terminkonflikt", "Feeling better": "Es geht mir besser", "Seeing another provider": "Andere Praxis",
    "Cost": "Kosten", "Transportation": "Anfahrt", "Other": "Sonstiges",
    # prescriptions
    "Request a refill": "Folgerezept anfordern", "Change pharmacy": "Apotheke wechseln", "For": "Für", "Prescriber": "Verordnet von",
    "Last filled": "Zuletzt eingelöst", "Refills left": "Verbleibende Folgerezepte", "Pharmacy": "Apotheke",
    "Your refill request was sent to the pharmacy.": "Ihre Anforderung wurde an die Apotheke gesendet.",
    # claims
    "Claim": "Abrechnung", "Service date": "Behandlungsdatum", "Provider": "Behandelnde/r", "Billed": "Berechnet",
    "Plan paid": "Von der Versicherung gezahlt", "You owe": "Ihr Anteil", "Any status": "Jeder Status", "Paid": "Bezahlt",
    "Denied": "Abgelehnt", "Pending": "In Bearbeitung", "Submit a claim": "Abrechnung einreichen",
    "Your claim was submitted.": "Ihre Abrechnung wurde eingereicht.", "Claim number": "Abrechnungsnummer", "Received": "Eingegangen",
    "Why this claim was denied": "Warum diese Abrechnung abgelehnt wurde", "Appeal submitted on": "Widerspruch eingereicht am",
    "Appeal this decision": "Widerspruch einlegen", "This claim is being processed.": "Diese Abrechnung wird bearbeitet.",
    "Explanation of benefits": "Leistungsabrechnung", "Code": "Code", "Allowed": "Anerkannt", "Deductible": "Selbstbehalt",
    "Copay": "Zuzahlung", "Coinsurance": "Kostenbeteiligung", "Attachments": "Anhänge", "Attachment": "Anhang",
    "Appeal a claim decision": "Widerspruch gegen eine Entscheidung", "Why should the plan reconsider?": "Warum soll die Versicherung neu entscheiden?",
    "Submit appeal": "Widerspruch einreichen", "Submit claim": "Abrechnung einreichen",
    "Not listed (type the name below)": "Nicht aufgeführt (Namen unten eingeben)", "Provider name, if not listed": "Name, falls nicht aufgeführt",
    "Amount you paid ($)": "Von Ihnen gezahlter Betrag ($)", "Description (optional)": "Beschreibung (optional)",
    "From your documents": "Aus Ihren Dokumenten", "Or upload a file (PDF, JPG, PNG)": "Oder eine Datei hochladen (PDF, JPG, PNG)",
    # messages, labs, profile
    "New message": "Neue Nachricht", "Reply": "Antworten", "Test": "Test", "Result": "Ergebnis", "Reference range": "Referenzbereich",
    "Flag": "Markierung", "Normal": "Normal", "High": "Hoch", "Low": "Niedrig", "Ordered by": "Angeordnet von",
    "No results on file.": "Keine Ergebnisse vorhanden.", "Lipid panel": "Lipidprofil", "Comprehensive metabolic panel": "Stoffwechselprofil",
    "Complete blood count": "Blutbild", "Hemoglobin A1c": "HbA1c", "Thyroid panel": "Schilddrüsenwerte",
    "Contact details": "Kontaktdaten", "Street address": "Straße und Hausnummer", "State": "Bundesstaat", "ZIP code": "Postleitzahl",
    "Phone": "Telefon", "Email": "E-Mail", "Text": "SMS", "Mail": "Post", "Preferred contact": "Bevorzugter Kontaktweg",
    "Emergency contact": "Notfallkontakt", "Emergency contact phone": "Telefon des Notfallkontakts",
    "Spouse": "Ehepartner/in", "Partner": "Partner/in", "Parent": "Elternteil", "Sibling": "Geschwister", "Child": "Kind",
    "Friend": "Freund/in", "Your profile was saved.": "Ihr Profil wurde gespeichert.",
    # refusals
    "No refills left on this prescription. Ask your prescriber for a new prescription.":
        "Für dieses Rezept gibt es keine Folgerezepte mehr. Bitten Sie Ihre Ärztin oder Ihren Arzt um ein neues Rezept.",
    "This prescription is completed: it cannot be refilled.": "Dieses Rezept ist abgeschlossen: kein Folgerezept möglich.",
    "This prescription is completed: its pharmacy cannot change.": "Dieses Rezept ist abgeschlossen: die Apotheke kann nicht wechseln.",
    "This prescription already goes to that pharmacy.": "Dieses Rezept geht bereits an diese Apotheke.",
    "Choose a pharmacy from the list.": "Wählen Sie eine Apotheke aus der Liste.",
    "Choose a reason for cancelling.": "Wählen Sie einen Grund für die Absage.",
    "Choose a specialty from the list.": "Wählen Sie ein Fachgebiet aus der Liste.",
    "Choose a family member.": "Wählen Sie ein Familienmitglied.", "Choose a family member from the list.": "Wählen Sie ein Familienmitglied aus der Liste.",
    "Say briefly what the visit is for.": "Sagen Sie kurz, wofür der Termin ist.",
    "That time was just taken: choose another one.": "Diese Zeit wurde gerade vergeben: wählen Sie eine andere.",
    "Choose one of this provider's open times.": "Wählen Sie eine freie Zeit dieser Praxis.",
    "Only an upcoming appointment can be rescheduled.": "Nur ein anstehender Termin kann verschoben werden.",
    "Only an upcoming appointment can be cancelled.": "Nur ein anstehender Termin kann abgesagt werden.",
    "Only a denied claim can be appealed.": "Nur gegen eine abgelehnte Abrechnung ist Widerspruch möglich.",
    "This claim was already appealed.": "Gegen diese Abrechnung wurde bereits Widerspruch eingelegt.",
    "Explain in a sentence or two (at least 20 characters) why the decision should change.":
        "Erklären Sie in ein, zwei Sätzen (mindestens 20 Zeichen), warum die Entscheidung sich ändern soll.",
    "Amount: enter dollars and cents such as 125.50 (digits, at most two decimals).":
        "Betrag: Dollar und Cent wie 125.50 eingeben (Ziffern, höchstens zwei Nachkommastellen).",
    "Amount must be more than $0.00.": "Der Betrag muss größer als 0,00 $ sein.",
    "A claim of more than $50,000.00 is sent by the provider, not through this form.":
        "Eine Abrechnung über 50.000,00 $ reicht die Praxis ein, nicht dieses Formular.",
    "Attach the itemized bill or receipt: choose one of your documents or upload a file.":
        "Hängen Sie die Rechnung oder Quittung an: wählen Sie ein Dokument oder laden Sie eine Datei hoch.",
    "Attach a PDF, JPG or PNG file.": "Hängen Sie eine PDF-, JPG- oder PNG-Datei an.",
    "A file can be at most 10 MB.": "Eine Datei darf höchstens 10 MB groß sein.", "The chosen file is empty.": "Die gewählte Datei ist leer.",
    "Choose a document from your documents.": "Wählen Sie eines Ihrer Dokumente.", "Choose a file to upload.": "Wählen Sie eine Datei zum Hochladen.",
    "Choose a provider from the list, or type the name of one not listed.":
        "Wählen Sie eine Praxis aus der Liste oder geben Sie den Namen einer nicht aufgeführten ein.",
    "Say who provided the service.": "Geben Sie an, wer die Leistung erbracht hat.",
    "Service date: enter a date as YYYY-MM-DD.": "Behandlungsdatum: als JJJJ-MM-TT eingeben.",
    "The service date cannot be in the future.": "Das Behandlungsdatum darf nicht in der Zukunft liegen.",
    "Claims must be submitted within one year of the service date.": "Abrechnungen sind binnen eines Jahres nach der Behandlung einzureichen.",
    "Choose someone from your care team.": "Wählen Sie jemanden aus Ihrem Behandlungsteam.",
    "A message needs a subject and some text.": "Eine Nachricht braucht einen Betreff und Text.", "Write a reply first.": "Schreiben Sie zuerst eine Antwort.",
    "Enter your street address and city.": "Geben Sie Straße und Stadt ein.", "State: the two-letter code, such as CA.": "Bundesstaat: der Zwei-Buchstaben-Code, z. B. CA.",
    "ZIP code: five digits, such as 95814.": "Postleitzahl: fünf Ziffern, z. B. 95814.",
    "Phone: enter a 10-digit US number such as (916) 555-0142.": "Telefon: eine zehnstellige US-Nummer wie (916) 555-0142.",
    "Enter an email address such as name@example.com.": "Geben Sie eine E-Mail-Adresse wie name@example.com ein.",
    "Choose how we should contact you.": "Wählen Sie, wie wir Sie erreichen sollen.",
    "Enter your emergency contact's name.": "Geben Sie den Namen Ihres Notfallkontakts ein.",
    "Choose your emergency contact's relationship to you.": "Wählen Sie die Beziehung Ihres Notfallkontakts zu Ihnen.",
    "No such appointment time.": "Diese Terminzeit gibt es nicht.", "No such appointment.": "Diesen Termin gibt es nicht.",
    "No such claim.": "Diese Abrechnung gibt es nicht.", "No such conversation.": "Diese Unterhaltung gibt es nicht.",
    "No such prescription.": "Dieses Rezept gibt es nicht.", "No such provider.": "Diese Praxis gibt es nicht.",
}


def german(text: str) -> str | None:
    """`text` in German, None where the portal's catalogue has no entry (the shared one may)."""
    return _DE.get(text)
