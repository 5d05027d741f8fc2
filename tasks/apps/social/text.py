"""Murmur's UI in each locale: its own German catalogue over the shared one
(`cua.tasks.apps.i18n`), and how it writes times: relative for the last week ("3h", "vor
3 Std."), a short date before that, the month a member joined.

A post's or a person's own text is never translated; judges read state, and oracles select
by `data-` attributes, roles or the record's own text.
"""

from __future__ import annotations

import datetime as dt

from cua.tasks.apps.i18n import format_day
from cua.tasks.apps.i18n import translate as shared_translate

__all__ = ["joined", "moment", "relative", "translate"]

_DE: dict[str, str] = {
    "A bio is at most 160 characters.": "Eine Bio hat höchstens 160 Zeichen.",
    "A choice is at most 25 characters.": "Eine Antwort hat höchstens 25 Zeichen.",
    "A hashtag is letters, digits and underscores.": "Ein Hashtag besteht aus Buchstaben, Ziffern und Unterstrichen.",
    "A link starts with https:// (or http://) and has no spaces.": "Ein Link beginnt mit https:// (oder http://) und hat keine Leerzeichen.",
    "A list needs a name.": "Eine Liste braucht einen Namen.",
    "A list's name is at most 25 characters.": "Der Name einer Liste hat höchstens 25 Zeichen.",
    "A location is at most 30 characters.": "Ein Ort hat höchstens 30 Zeichen.",
    "A message is at most 1,000 characters.": "Eine Nachricht hat höchstens 1.000 Zeichen.",
    "A name is 1 to 50 characters.": "Ein Name hat 1 bis 50 Zeichen.",
    "A page is a whole number from 1.": "Eine Seite ist eine ganze Zahl ab 1.",
    "A poll needs a question.": "Eine Umfrage braucht eine Frage.",
    "A poll needs at least two choices.": "Eine Umfrage braucht mindestens zwei Antworten.",
    "A poll runs 1, 3 or 7 days.": "Eine Umfrage läuft 1, 3 oder 7 Tage.",
    "A post is at most 280 characters": "Ein Beitrag hat höchstens 280 Zeichen",
    "A post replies or quotes, not both.": "Ein Beitrag antwortet oder zitiert, nicht beides.",
    "A post takes an image or a poll, not both.": "Ein Beitrag hat ein Bild oder eine Umfrage, nicht beides.",
    "A profile shows posts, replies or media.": "Ein Profil zeigt Beiträge, Antworten oder Medien.",
    "A reply or a quote takes no poll.": "Eine Antwort oder ein Zitat hat keine Umfrage.",
    "Accounts you follow": "Konten, denen du folgst",
    "Activity": "Aktivität",
    "Activity is all, active or inactive.": "Aktivität ist alle, aktiv oder inaktiv.",
    "Add": "Hinzufügen",
    "Add a comment": "Kommentar hinzufügen",
    "Add someone by handle": "Jemanden per Nutzername hinzufügen",
    "Add to list": "Zur Liste hinzufügen",
    "All": "Alle",
    "Apply": "Anwenden",
    "Back to Home": "Zurück zur Startseite",
    "Back to the post": "Zurück zum Beitrag",
    "Backup code for signing in without your phone. Keep it secret: Murmur staff will never ask for it.":
        "Backup-Code für die Anmeldung ohne dein Telefon. Halte ihn geheim: Das Murmur-Team fragt nie danach.",
    "Bio": "Bio",
    "Block": "Blockieren",
    "Blocked accounts": "Blockierte Konten",
    "Bookmark": "Lesezeichen setzen",
    "Bookmarks": "Lesezeichen",
    "Cancel": "Abbrechen",
    "Cannot do that": "Das geht nicht",
    "Choice": "Antwort",
    "Choose one of the poll's choices.": "Wähle eine der Antworten der Umfrage.",
    "Choose who can reply: everyone, accounts you follow, or only accounts you mention.":
        "Wähle, wer antworten darf: alle, Konten, denen du folgst, oder nur erwähnte Konten.",
    "Closes": "Endet",
    "Connections": "Verbindungen",
    "Conversation": "Unterhaltung",
    "Create list": "Liste erstellen",
    "Delete": "Löschen",
    "Delete post": "Beitrag löschen",
    "Delete this post?": "Diesen Beitrag löschen?",
    "Deleted post": "Gelöschter Beitrag",
    "Description": "Beschreibung",
    "Each choice of a poll is different.": "Jede Antwort einer Umfrage ist anders.",
    "Edit profile": "Profil bearbeiten",
    "Everyone": "Alle",
    "Explore": "Entdecken",
    "Final results": "Endergebnis",
    "Follow": "Folgen",
    "Followers": "Follower",
    "Following": "Gefolgt",
    "Follows you": "Folgt dir",
    "Hashtags": "Hashtags",
    "Home": "Start",
    "Image": "Bild",
    "Image description (alt text)": "Bildbeschreibung (Alternativtext)",
    "It will be removed from your profile and from every feed. This cannot be undone.":
        "Er wird aus deinem Profil und aus allen Feeds entfernt. Das lässt sich nicht rückgängig machen.",
    "Last posted": "Zuletzt gepostet",
    "Latest posts": "Neueste Beiträge",
    "Like": "Gefällt mir",
    "Liked by": "Gefällt",
    "Lists": "Listen",
    "Location": "Ort",
    "Mark all as read": "Alle als gelesen markieren",
    "Mark read": "Als gelesen markieren",
    "Media": "Medien",
    "Members": "Mitglieder",
    "Mentions": "Erwähnungen",
    "Message": "Nachricht",
    "Messages": "Nachrichten",
    "Mute": "Stummschalten",
    "Mute a hashtag": "Hashtag stummschalten",
    "Muted": "Stummgeschaltet",
    "Name": "Name",
    "Name a hashtag or an account to mute.": "Nenne einen Hashtag oder ein Konto zum Stummschalten.",
    "New list": "Neue Liste",
    "New message to": "Neue Nachricht an",
    "New post": "Neuer Beitrag",
    "Newer": "Neuer",
    "Next": "Weiter",
    "No posts in the last 30 days": "Keine Beiträge in den letzten 30 Tagen",
    "No results.": "Keine Treffer.",
    "No such account": "Kein solches Konto",
    "No such list.": "Keine solche Liste.",
    "No such notification.": "Keine solche Mitteilung.",
    "No such post.": "Kein solcher Beitrag.",
    "Nobody here yet.": "Noch niemand hier.",
    "Nothing here yet.": "Noch nichts hier.",
    "Notifications": "Mitteilungen",
    "Older": "Älter",
    "Only accounts you mention": "Nur Konten, die du erwähnst",
    "Pages": "Seiten",
    "People": "Personen",
    "Poll": "Umfrage",
    "Poll length": "Dauer der Umfrage",
    "Popular this week": "Beliebt diese Woche",
    "Post": "Posten",
    "Post actions": "Aktionen zum Beitrag",
    "Posted in the last 30 days": "In den letzten 30 Tagen gepostet",
    "Posts": "Beiträge",
    "Privacy and safety": "Privatsphäre und Sicherheit",
    "Private": "Privat",
    "Profile": "Profil",
    "Quote": "Zitieren",
    "Quote post": "Beitrag zitieren",
    "Remove": "Entfernen",
    "Remove bookmark": "Lesezeichen entfernen",
    "Replies": "Antworten",
    "Reply": "Antworten",
    "Replying to": "Antwort an",
    "Repost": "Teilen",
    "Save": "Speichern",
    "Say whether to add or remove.": "Sag, ob hinzugefügt oder entfernt werden soll.",
    "Search": "Suchen",
    "Search Murmur": "Murmur durchsuchen",
    "Search people, posts and hashtags": "Personen, Beiträge und Hashtags suchen",
    "Search people, posts or hashtags.": "Suche nach Personen, Beiträgen oder Hashtags.",
    "Security": "Sicherheit",
    "Send": "Senden",
    "Sensitive content: show": "Sensible Inhalte: anzeigen",
    "Settings": "Einstellungen",
    "Settings saved.": "Einstellungen gespeichert.",
    "Show all, mentions or unread.": "Zeige alle, Erwähnungen oder ungelesene.",
    "Show posts marked as sensitive": "Als sensibel markierte Beiträge anzeigen",
    "Start a message": "Nachricht schreiben",
    "The message is empty: write something first.": "Die Nachricht ist leer: Schreib zuerst etwas.",
    "The post is empty: write something first.": "Der Beitrag ist leer: Schreib zuerst etwas.",
    "They will not see your posts or message you, you will not see theirs, and neither of you will follow the other.":
        "Das Konto sieht deine Beiträge nicht und kann dir nicht schreiben, du siehst seine nicht, und ihr folgt einander nicht mehr.",
    "This poll is closed.": "Diese Umfrage ist beendet.",
    "This post has no poll.": "Dieser Beitrag hat keine Umfrage.",
    "This post is already deleted.": "Dieser Beitrag ist bereits gelöscht.",
    "This post is unavailable.": "Dieser Beitrag ist nicht verfügbar.",
    "This post was deleted": "Dieser Beitrag wurde gelöscht",
    "This post was deleted by its author.": "Dieser Beitrag wurde von seinem Autor gelöscht.",
    "Trending": "Im Trend",
    "Trending hashtags": "Hashtags im Trend",
    "Trends": "Trends",
    "Type a handle, like @name.": "Gib einen Nutzernamen ein, etwa @name.",
    "Unblock": "Blockierung aufheben",
    "Undo repost": "Teilen rückgängig machen",
    "Unfollow": "Entfolgen",
    "Unlike": "Gefällt mir nicht mehr",
    "Unmute": "Stummschaltung aufheben",
    "Unread": "Ungelesen",
    "Verified": "Verifiziert",
    "Vote": "Abstimmen",
    "Website": "Website",
    "What's happening?": "Was gibt's Neues?",
    "Who can reply to your posts": "Wer auf deine Beiträge antworten darf",
    "You already have a list with that name.": "Du hast schon eine Liste mit diesem Namen.",
    "You already voted in this poll: votes are final.": "Du hast in dieser Umfrage schon abgestimmt: Stimmen sind endgültig.",
    "You blocked this account. Their posts are hidden.": "Du hast dieses Konto blockiert. Seine Beiträge sind ausgeblendet.",
    "You blocked this account. Unblock it first.": "Du hast dieses Konto blockiert. Heb die Blockierung zuerst auf.",
    "You can only delete your own posts.": "Du kannst nur deine eigenen Beiträge löschen.",
    "You cannot block yourself.": "Du kannst dich nicht selbst blockieren.",
    "You cannot follow yourself.": "Du kannst dir nicht selbst folgen.",
    "You cannot message yourself.": "Du kannst dir nicht selbst schreiben.",
    "You cannot mute yourself.": "Du kannst dich nicht selbst stummschalten.",
    "You cannot vote in your own poll.": "Du kannst nicht in deiner eigenen Umfrage abstimmen.",
    "You muted this hashtag: its posts are hidden from your feeds.": "Du hast diesen Hashtag stummgeschaltet: Seine Beiträge sind in deinen Feeds ausgeblendet.",
    "Your reply": "Deine Antwort",
    "day": "Tag",
    "days": "Tage",
    "followed you": "folgt dir jetzt",
    "it cannot be bookmarked": "Er kann kein Lesezeichen bekommen",
    "it cannot be liked": "Er kann kein Gefällt mir bekommen",
    "it cannot be quoted": "Er kann nicht zitiert werden",
    "it cannot be reposted": "Er kann nicht geteilt werden",
    "it takes no replies": "Er nimmt keine Antworten an",
    "its poll is closed": "Seine Umfrage ist beendet",
    "liked your post": "hat deinen Beitrag mit „Gefällt mir“ markiert",
    "likes": "Gefällt mir",
    "members": "Mitglieder",
    "mentioned you": "hat dich erwähnt",
    "never": "nie",
    "posts": "Beiträge",
    "replied to your post": "hat auf deinen Beitrag geantwortet",
    "reposted": "hat geteilt",
    "reposted your post": "hat deinen Beitrag geteilt",
    "reposts": "Mal geteilt",
    "unread": "ungelesen",
    "votes": "Stimmen",
}

_MONTHS = {"en-US": ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                     "November", "December"],
           "de-DE": ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
                     "November", "Dezember"]}


def translate(locale: str, text: str) -> str:
    """`text` in `locale`: Murmur's own catalogue, then the apps' shared one, then English."""
    if locale == "de-DE" and text in _DE:
        return _DE[text]
    return shared_translate(locale, text)


def relative(at: dt.datetime, now: dt.datetime, locale: str) -> str:
    """How long ago: `now`, `12m`, `3h`, `2d` (`jetzt`, `vor 12 Min.`, `vor 3 Std.`, `vor 2 T.`), a short date after a week."""
    seconds = max(0, int((now - at).total_seconds()))
    de = locale == "de-DE"
    if seconds < 60:
        return "jetzt" if de else "now"
    for size, en, german in ((3600, "m", "Min."), (86400, "h", "Std."), (7 * 86400, "d", "T.")):
        if seconds < size:
            unit = {3600: 60, 86400: 3600, 7 * 86400: 86400}[size]
            n = seconds // unit
            return f"vor {n} {german}" if de else f"{n}{en}"
    if de:
        return format_day(at.date(), locale, with_year=at.year != now.year)
    return at.strftime("%b %-d") if at.year == now.year else at.strftime("%b %-d, %Y")


def joined(day: str, locale: str) -> str:
    """`Joined May 2019` / `Dabei seit Mai 2019`."""
    d = dt.date.fromisoformat(day)
    month = _MONTHS.get(locale, _MONTHS["en-US"])[d.month - 1]
    return f"Dabei seit {month} {d.year}" if locale == "de-DE" else f"Joined {month} {d.year}"


def moment(stamp: str, locale: str) -> str:
    """A date and time (`YYYY-MM-DD HH:MM`) as the locale writes it: `Mar 17, 7:21 PM` / `17.03.2026, 19:21 Uhr`."""
    at = dt.datetime.strptime(stamp, "%Y-%m-%d %H:%M")
    if locale == "de-DE":
        return f"{format_day(at.date(), locale, with_year=True)}, {at:%H:%M} Uhr"
    return f"{at:%b} {at.day}, {at.hour % 12 or 12}:{at:%M} {'AM' if at.hour < 12 else 'PM'}"
