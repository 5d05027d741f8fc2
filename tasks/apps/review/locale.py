"""Patchbay's UI text in German (de-DE), and its times and counts as each locale writes them.

A text with a `{field}` is a template the app fills after translating. Code, titles,
descriptions, comments, labels, logins and names are data and stay as stored.
"""

from __future__ import annotations

import datetime as dt

from cua.tasks.apps.i18n import format_day, format_number

__all__ = ["DE", "number", "stamp"]

DE: dict[str, str] = {
    # navigation and chrome
    "Dashboard": "Übersicht", "Pull requests": "Pull-Requests", "Issues": "Issues", "Repositories": "Repositorys",
    "Notifications": "Benachrichtigungen", "Profile": "Profil", "Cannot do that": "Nicht möglich", "Go back": "Zurück",
    # statuses and checks
    "Open": "Offen", "Draft": "Entwurf", "Merged": "Gemergt", "Closed": "Geschlossen", "All": "Alle",
    "open": "offen", "draft": "Entwurf", "merged": "gemergt", "closed": "geschlossen", "resolved": "gelöst",
    "All checks passed": "Alle Prüfungen bestanden", "Some checks failed": "Einige Prüfungen fehlgeschlagen",
    "Checks are running": "Prüfungen laufen",
    "It is a draft: mark it ready for review first.": "Er ist ein Entwurf: Markieren Sie ihn zuerst als bereit zur Prüfung.",
    "It is {status}.": "Er ist {status}.", "Failing checks: {names}.": "Fehlgeschlagene Prüfungen: {names}.",
    "Checks still running: {names}.": "Noch laufende Prüfungen: {names}.",
    "It needs an approving review from someone other than its author.":
        "Er braucht eine Freigabe von jemand anderem als seinem Autor.",
    "Changes requested by {names}.": "Änderungen angefordert von {names}.",
    # lists
    "{org}/{repo} #{n} · opened {date} by": "{org}/{repo} #{n} · eröffnet am {date} von",
    "1 comment": "1 Kommentar", "{n} comments": "{n} Kommentare", "No pull requests match.": "Keine passenden Pull-Requests.",
    "Waiting for your review ({n})": "Wartet auf Ihre Prüfung ({n})", "Your open pull requests": "Ihre offenen Pull-Requests",
    "Status is one of: {statuses}, all.": "Status ist einer von: {statuses}, alle.", "{n} pull requests": "{n} Pull-Requests",
    "Reviewer": "Prüfer", "Anyone": "Beliebig", "Any": "Beliebig", "Search": "Suchen", "Status": "Status",
    "Repository": "Repository", "Author": "Autor", "Label": "Label", "Filter": "Filtern",
    "{language} · ★ {stars} · {n} open pull requests": "{language} · ★ {stars} · {n} offene Pull-Requests",
    "{n} bytes": "{n} Bytes", "Default branch": "Standardzweig", "Files": "Dateien",
    # a pull request
    "Conversation": "Unterhaltung", "Files changed ({n})": "Geänderte Dateien ({n})", "Pull request": "Pull-Request",
    "{who} wants to merge {head} into {base} · opened {stamp}": "{who} möchte {head} in {base} mergen · eröffnet am {stamp}",
    "{who} commented {time}": "{who} kommentierte {time}", "{who} approved these changes {time}": "{who} hat diese Änderungen freigegeben {time}",
    "{who} requested changes {time}": "{who} hat Änderungen angefordert {time}", "{who} reviewed {time}": "{who} hat geprüft {time}", "Dismissed: {reason}": "Verworfen: {reason}",
    "Dismiss review {id}": "Prüfung {id} verwerfen", "Dismiss": "Verwerfen", "Reason": "Grund", "Dismiss review": "Prüfung verwerfen",
    "{n} comments on": "{n} Kommentare zu", "{path} line {line}": "{path} Zeile {line}", " · resolved": " · gelöst",
    "{who} merged commit {sha} ({how}) {time}": "{who} hat Commit {sha} gemergt ({how}) {time}", "Closed {time}": "Geschlossen {time}",
    "{n} comments on {where}": "{n} Kommentare zu {where}", "{who} opened this pull request": "{who} hat diesen Pull-Request eröffnet",
    "{badge} {who} opened this issue {time}": "{badge} {who} hat dieses Issue am {time} eröffnet",
    "Resolved by {who}": "Gelöst von {who}", "{org}/{repo} #{n} · opened {date} by {who}": "{org}/{repo} #{n} · eröffnet am {date} von {who}",
    "Add a comment": "Kommentar hinzufügen", "Comment": "Kommentieren", "opened this pull request": "hat diesen Pull-Request eröffnet",
    "Checks": "Prüfungen", "Merge": "Mergen", "Merging is blocked": "Mergen ist blockiert", "Merge pull request": "Pull-Request mergen",
    "This branch can be merged": "Dieser Zweig kann gemergt werden", "Close pull request": "Pull-Request schließen",
    "Reopen pull request": "Pull-Request wieder öffnen", "Ready for review": "Bereit zur Prüfung",
    "Remove {kind} {value}": "{kind} {value} entfernen", "Choose…": "Auswählen…", "None yet": "Noch keine",
    "Add {kind}": "{kind} hinzufügen", "Add": "Hinzufügen", "Details": "Details", "Reviewers": "Prüfer", "Assignees": "Zuständige",
    "Labels": "Labels", "reviewer": "Prüfer", "assignee": "Zuständige", "label": "Label",
    "Create a merge commit": "Merge-Commit erstellen", "Squash and merge": "Squashen und mergen",
    # diff and review
    "line {line} of {path}": "Zeile {line} von {path}", "Comment on {where}": "Kommentar zu {where}", "old line": "alte Zeile",
    "new line": "neue Zeile", "Unresolve": "Wieder öffnen", "Resolve conversation": "Unterhaltung lösen",
    "Reply to the thread on {path} line {line}": "Auf den Thread zu {path} Zeile {line} antworten", "Reply": "Antworten",
    "Thread on {path} line {line}": "Thread zu {path} Zeile {line}", "Resolved by": "Gelöst von",
    "This pull request is {status}: it takes no more reviews.": "Dieser Pull-Request ist {status}: Er nimmt keine Prüfungen mehr an.",
    "Approve": "Freigeben", "Request changes": "Änderungen anfordern", "Finish your review": "Prüfung abschließen",
    "Summary": "Zusammenfassung", "Your verdict": "Ihr Urteil", "Submit review": "Prüfung absenden",
    "Merge #{n} “{title}” into {base}?": "#{n} „{title}“ in {base} mergen?",
    "Merging cannot be undone from here.": "Das Mergen kann hier nicht rückgängig gemacht werden.", "Merge method": "Merge-Methode",
    "Confirm merge": "Mergen bestätigen", "Cancel": "Abbrechen",
    # issues, people, notifications
    "{n} issues": "{n} Issues", "opened this issue {stamp}": "hat dieses Issue am {stamp} eröffnet", "Close issue": "Issue schließen",
    "Reopen issue": "Issue wieder öffnen", "{org}/{repo} issues": "{org}/{repo} Issues", "Login": "Login", "Location": "Ort",
    "Locale": "Sprache", "Email": "E-Mail", "Reviews": "Prüfungen", "Open pull requests ({n})": "Offene Pull-Requests ({n})",
    "Mark notification {id} read": "Benachrichtigung {id} als gelesen markieren", "Mark read": "Als gelesen markieren",
    "Mark all as read": "Alle als gelesen markieren",
    # refusals
    "{what} is empty: write something first.": "{what} ist leer: Schreiben Sie zuerst etwas.",
    "{what} is at most {n} characters.": "{what} hat höchstens {n} Zeichen.", "The comment": "Der Kommentar",
    "The reply": "Die Antwort", "The summary": "Die Zusammenfassung", "The reason for dismissing": "Der Grund für das Verwerfen",
    "No repository {org}/{name}.": "Kein Repository {org}/{name}.",
    "No pull request #{n} in {org}/{repo}.": "Kein Pull-Request #{n} in {org}/{repo}.",
    "No file {path} in {org}/{repo}.": "Keine Datei {path} in {org}/{repo}.",
    "Choose a line of the diff to comment on.": "Wählen Sie eine Zeile des Diffs zum Kommentieren.",
    "This pull request does not change {path}.": "Dieser Pull-Request ändert {path} nicht.", "that file": "diese Datei",
    "Line {line} of {path} is not in this diff: comment on a line the diff shows.":
        "Zeile {line} von {path} ist nicht in diesem Diff: Kommentieren Sie eine Zeile, die der Diff zeigt.",
    "No such conversation on this pull request.": "Keine solche Unterhaltung in diesem Pull-Request.",
    "This conversation is already {state}.": "Diese Unterhaltung ist bereits {state}.",
    "Choose a verdict: comment, approve or request changes.": "Wählen Sie ein Urteil: kommentieren, freigeben oder Änderungen anfordern.",
    "You cannot approve or request changes on your own pull request.":
        "Sie können Ihren eigenen Pull-Request nicht freigeben oder Änderungen daran anfordern.",
    "No such review on this pull request.": "Keine solche Prüfung in diesem Pull-Request.",
    "Only an approval or a request for changes that still counts can be dismissed.":
        "Nur eine noch gültige Freigabe oder Änderungsanforderung kann verworfen werden.",
    "This pull request is {status}: its reviews stay as they are.": "Dieser Pull-Request ist {status}: Seine Prüfungen bleiben, wie sie sind.",
    "Say whether to add or remove.": "Geben Sie an, ob hinzugefügt oder entfernt wird.",
    "Choose a {kind} from the list.": "Wählen Sie {kind} aus der Liste.",
    "Choose a {kind} from the list, not {value!r}.": "Wählen Sie {kind} aus der Liste, nicht {value!r}.",
    "The author of a pull request cannot review it.": "Der Autor eines Pull-Requests kann ihn nicht prüfen.",
    "{value} is already a {kind} of this pull request.": "{value} ist bereits {kind} dieses Pull-Requests.",
    "{value} is not a {kind} of this pull request.": "{value} ist nicht {kind} dieses Pull-Requests.",
    "This pull request cannot be merged: {why}": "Dieser Pull-Request kann nicht gemergt werden: {why}",
    "Choose how to merge: a merge commit or squash.": "Wählen Sie, wie gemergt wird: Merge-Commit oder Squash.",
    "This pull request is already {status}.": "Dieser Pull-Request ist bereits {status}.",
    "Only a closed pull request can be reopened.": "Nur ein geschlossener Pull-Request kann wieder geöffnet werden.",
    "Only a closed pull request can be reopened. A merged one stays merged.":
        "Nur ein geschlossener Pull-Request kann wieder geöffnet werden. Ein gemergter bleibt gemergt.",
    "Only a draft can be marked ready for review.": "Nur ein Entwurf kann als bereit zur Prüfung markiert werden.",
    "Status is one of: open, closed, all.": "Status ist einer von: offen, geschlossen, alle.",
    "No issue #{n} in {org}/{repo}.": "Kein Issue #{n} in {org}/{repo}.", "An issue is open or closed.": "Ein Issue ist offen oder geschlossen.",
    "This issue is already {status}.": "Dieses Issue ist bereits {status}.", "No such person.": "Keine solche Person.",
    "No such notification.": "Keine solche Benachrichtigung.",
}


def stamp(value: str, locale: str) -> str:
    """A stored `YYYY-MM-DD[ HH:MM]`: as stored in en-US, `02.03.2026[ 14:05]` in de-DE."""
    if locale == "en-US":
        return value
    try:
        return f"{format_day(dt.date.fromisoformat(value[:10]), locale, with_year=True)}{value[10:]}"
    except ValueError:
        return value


def number(n: int, locale: str) -> str:
    """A count with the locale's thousands separator (`12,345` / `12.345`)."""
    return format_number(n, locale)
