"""Seeded parameters of the office suite's Thunderbird tasks: a profile whose one account
sends through the SMTP server on the sandbox's loopback (`smtp_sink.py`, run as a
windowless app), the message to send, and the reader of what that server received."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

#: Where the sandbox keeps the profile, the server and what it received (relative to $HOME).
PROFILE = ".thunderbird/cua"
SINK = ".local/share/cua/smtp_sink.py"
OUTBOX = "outbox"
PORT = 2525

#: Reads what the server received with the standard library, in one of two views:
#: "recipients" prints, per message, its To and Cc headers' addresses and the envelope's
#: (blind copies included); "content" prints its subject and plain-text body (format=flowed
#: soft breaks joined). Both start with the number of messages.
READER = r"""
import email, email.policy, email.utils, glob, json, sys
paths = sorted(glob.glob(sys.argv[1] + '/*.eml'))
print('MESSAGES', len(paths))
for path in paths:
    with open(path, 'rb') as f:
        m = email.message_from_binary_file(f, policy=email.policy.default)
    def addresses(*names):
        values = [str(v) for name in names for v in m.get_all(name, [])]
        return ' '.join(sorted(a.lower() for _, a in email.utils.getaddresses(values)))
    if sys.argv[2] == 'recipients':
        print('TO', addresses('To'))
        print('CC', addresses('Cc'))
        print('ENVELOPE', addresses('X-Cua-Rcpt'))
    else:
        part = m.get_body(('plain',))
        text = part.get_content() if part is not None else ''
        if part is not None and part.get_param('format') == 'flowed':
            text = ''.join(line[:-1] if line.endswith(' ') and line != '-- ' else line + '\n'
                           for line in text.replace('\r\n', '\n').split('\n'))
        print('SUBJECT', json.dumps(str(m['subject'] or '')))
        print('BODY', json.dumps(text.strip()))
"""

PEOPLE = (("Alex Moreno", "alex.moreno"), ("Priya Natarajan", "priya.n"), ("Jonas Berg", "jonas.berg"),
          ("Mei Tanaka", "mei.tanaka"), ("Omar Haddad", "omar.h"), ("Lucia Ferri", "lucia.ferri"),
          ("Tomasz Nowak", "t.nowak"), ("Grace Okafor", "grace.okafor"))
DOMAINS = ("example.test", "corp.example", "mail.example")
TOPICS = (("Budget review", "The budget sheet is updated; please check the {day} figures."),
          ("Team offsite", "The offsite moves to {day}. Rooms are booked for twelve."),
          ("Release notes", "Release notes for {day} are in the shared folder."),
          ("Invoice {n}", "Invoice {n} was paid on {day}. No action needed."),
          ("Interview schedule", "Your interview slot is {day} at {hour}:00 in room {n}."))
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")


def user_js(name: str, address: str) -> str:
    """The profile's prefs: Local Folders holds the one identity, which sends through the
    loopback server (no auth, no TLS, no copy to Sent), in plain text; the first-run
    account wizard, the default-client check and every network service are off."""
    prefs: dict[str, str | int | bool] = {
        "mail.accountmanager.accounts": "account1", "mail.accountmanager.defaultaccount": "account1",
        "mail.accountmanager.localfoldersserver": "server1", "mail.account.account1.server": "server1",
        "mail.account.account1.identities": "id1", "mail.server.server1.type": "none",
        "mail.server.server1.hostname": "Local Folders", "mail.server.server1.name": "Local Folders",
        "mail.server.server1.userName": "nobody", "mail.identity.id1.fullName": name,
        "mail.identity.id1.useremail": address, "mail.identity.id1.fcc": False,
        "mail.identity.id1.compose_html": False, "mail.identity.id1.smtpServer": "smtp1",
        "mail.smtpservers": "smtp1", "mail.smtp.defaultserver": "smtp1",
        "mail.smtpserver.smtp1.hostname": "127.0.0.1", "mail.smtpserver.smtp1.port": PORT,
        "mail.smtpserver.smtp1.authMethod": 1, "mail.smtpserver.smtp1.try_ssl": 0,
        "mail.provider.enabled": False, "mail.shell.checkDefaultClient": False,
        "mailnews.start_page.enabled": False, "mail.rights.version": 1, "mail.warn_on_send_accel_key": False,
        "mail.spotlight.firstRunDone": True, "mail.winsearch.firstRunDone": True,
        "toolkit.telemetry.reportingpolicy.firstRun": False, "datareporting.policy.dataSubmissionEnabled": False,
        "app.update.enabled": False, "app.update.auto": False, "extensions.update.enabled": False,
        "network.captive-portal-service.enabled": False, "network.connectivity-service.enabled": False,
        "browser.safebrowsing.malware.enabled": False, "browser.safebrowsing.phishing.enabled": False,
        "mailnews.auto_config_url": "", "mail.cloud_files.enabled": False,
        # no system proxy lookup, no offline detection: the sandbox has only its loopback
        "network.proxy.type": 0, "network.manage-offline-status": False, "offline.autoDetect": False,
        "mail.smtpserver.smtp1.hello_argument": "localhost",
        # no animations (the send progress bar, smooth scrolling): frames cost CPU and
        # change screenshots between steps
        "ui.prefersReducedMotion": 1, "toolkit.cosmeticAnimations.enabled": False, "general.smoothScroll": False,
    }
    return "".join(f"user_pref({_js(k)}, {_js(v)});\n" for k, v in prefs.items())


def _js(value: str | int | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, int) else '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def thunderbird_send(_: Any, rng: random.Random) -> dict[str, Any]:
    """A sender, a recipient and a copy recipient (three different people), and a seeded
    subject and one-line body; the near miss puts both recipients on the To line."""
    (sender, s_user), (to_name, to_user), (cc_name, cc_user) = rng.sample(PEOPLE, 3)
    domain = rng.choice(DOMAINS)
    to, cc = f"{to_user}@{domain}", f"{cc_user}@{domain}"
    fill = {"day": rng.choice(DAYS), "n": rng.randint(100, 999), "hour": rng.randint(9, 16)}
    subject, body = (text.format(**fill) for text in rng.choice(TOPICS))
    sink = (Path(__file__).parent / "smtp_sink.py").read_text()
    return {
        "files": {f"{PROFILE}/user.js": user_js(sender, f"{s_user}@{domain}"), SINK: sink},
        "sink": SINK, "outbox": OUTBOX, "port": str(PORT), "profile": f"/home/user/{PROFILE}",
        "to": to, "to_name": to_name, "cc": cc, "cc_name": cc_name, "subject": subject, "body": body,
        "reader": READER,
        "recipients": f"MESSAGES 1\nTO {to}\nCC {cc}\nENVELOPE {' '.join(sorted((to, cc)))}\n",
        "content": f"MESSAGES 1\nSUBJECT {json.dumps(subject)}\nBODY {json.dumps(body)}\n",
    }
