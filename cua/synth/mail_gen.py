"""Templates for the mail app (tasks/apps/mail), described for the generator core.

A message is drawn among the received ones in the inbox or the archive whose subject is
unique and that nobody answered or forwarded yet (so a reply or a forward the agent sends
is the only one), opened by a `subject:` search. What a user does to one message is a
*part* -- star it, label it, reply with exact text, forward it to a contact, archive it --
with its own params, checks, exact changes and steps on the open message; an operation is
one part or a chain of 2 to 5 of them on the same message (a checkpoint per part, the near
miss stops one short), or a chain that ends with a question about the message (the near
miss answers another message's value). Beside them: delete a message and purge it from the
trash (the absence, and the history: it went through the trash), mark read or unread in
bulk through a search filter, count the unread mail of a sender, name who sent the latest
mail about a topic, and the sender's address of a message.

Every selector is the hand-written mail suite's: `data-action`, `data-field`, `data-id`,
names and values; no class, position or English UI text (the app has de-DE and three
layouts). Opening a message marks it read: those templates allow it as an incidental
change and say why it goes unjudged, as the hand-written suite does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cua.synth.schema import AppSchema, Description, Entity, Operation, select_subgoal

__all__ = ["DESCRIPTION", "GENERATOR_VERSION", "SCHEMA"]

#: 2: judge QA's findings at version 1 (--count 20 admitted 8): progress that never falls (a state subgoal per part,
#: the compose form a step); a question about a read message; a purge allows the history's move to the trash.
#: 3: an unread message only where a part changes its row (version 2: a wrong-target probe passed 1 of 20);
#: 4: in every scope (version 3: the "any" scope drew an unread one for a label, 1 of 20)
#: 5: the star subgoal reads the message's own star (version 4 read the inbox's first row's, which the
#:    realistic data starred at seed 1: progress fell on the search)
GENERATOR_VERSION = 5
ME = "alex.morgan@example.com"
_M = "{m.id}"
_UNREAD = "AND m.read = 0"
_READ_ONLY = "AND m.read = 1"
_READ = {"incidental_changes": [{"path": "messages[*].read", "to": True}],
         "unjudged": {"messages[*].read": "the app marks a message read whenever it is shown; which messages the agent "
                                          "looked at is not the task"}}

SCOPES: tuple[tuple[str, str], ...] = (
    ("any", ""),
    ("unread", _UNREAD),
    ("read", _READ_ONLY),
    ("labelled", "AND EXISTS (SELECT 1 FROM message_labels ml WHERE ml.message_id = m.id)"),
    ("unlabelled", "AND NOT EXISTS (SELECT 1 FROM message_labels ml WHERE ml.message_id = m.id)"),
    ("attachment", "AND EXISTS (SELECT 1 FROM attachments a WHERE a.message_id = m.id)"),  # == _ATT
    ("inbox", "AND m.folder = 'inbox'"),
    ("archived", "AND m.folder = 'archive'"),
)

_OPEN = ({"fill": {"selector": "input[name=q]", "text": 'subject:"{m.subject}"', "submit": True}},
         {"click": 'tr[data-id="{m.id}"] a[data-field=subject]'})

MESSAGE = Entity(
    name="message", param="m", table="messages", alias="m",
    rows_sql="SELECT m.id, m.subject, m.from_name, m.from_email, m.folder, m.starred, m.read, "
             "(SELECT COUNT(*) FROM attachments a WHERE a.message_id = m.id) AS n_att FROM messages m "
             f"WHERE m.folder IN ('inbox', 'archive') AND m.from_email != '{ME}' "
             "AND (SELECT COUNT(*) FROM messages x WHERE x.subject = m.subject) = 1 "
             "AND NOT EXISTS (SELECT 1 FROM messages r WHERE r.in_reply_to = m.id OR r.forwarded_from = m.id) "
             "{where} ORDER BY m.id",
    label='the email "{m.subject}" from {m.from_name}',
    open=_OPEN, save=(), path="^/message/{m.id}(/|$)", skills=("search", "navigate"),
)


def _rows(sql: str, *params: str) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "rows", "sql": sql}
    if params:
        out["params"] = list(params)
    return out


def _open_other(p: str) -> list[dict[str, Any]]:
    return [{"fill": {"selector": "input[name=q]", "text": 'subject:"{' + p + '.subject}"', "submit": True}},
            {"click": 'tr[data-id="{' + p + '.id}"] a[data-field=subject]'}]


@dataclass(frozen=True)
class Part:
    """One thing done to the open message: its wording (an imperative, `{it}` for the message), the
    filter it needs of the message, its params, checks, exact changes, steps and checkpoint.
    `leaves` says its last step leaves the message's page (a send, an archive): a part after it
    opens the message again."""

    name: str
    says: str
    steps: tuple[dict[str, Any], ...]
    checks: tuple[dict[str, Any], ...]
    changes: tuple[str, ...]
    where: str = ""
    params: tuple[tuple[str, dict[str, Any]], ...] = ()
    #: checkpoints in the page, in order (a compose form open, a field that holds the text)
    subgoals: tuple[dict[str, Any], ...] = ()
    leaves: bool = False
    #: a wrong version of the steps, for the part's own near miss (None: its near miss acts on another message)
    wrong: tuple[dict[str, Any], ...] | None = None
    wrong_params: tuple[tuple[str, dict[str, Any]], ...] = ()
    skills: tuple[str, ...] = field(default=())
    #: the scopes it means nothing in (an archived message is not archived again)
    excludes: tuple[str, ...] = ()
    #: it changes a column of the message's own row (its star, its folder)
    own_row: bool = False


_ATT = "AND EXISTS (SELECT 1 FROM attachments a WHERE a.message_id = m.id)"
#: a forward carries the original's attachments: the part forwards one without any, so that each is judged
_NO_ATT = "AND NOT EXISTS (SELECT 1 FROM attachments a WHERE a.message_id = m.id)"
_SENT_ROW = ("(SELECT COUNT(*) FROM attachments a WHERE a.message_id = messages.id) AS attachments, "
             "(SELECT COUNT(*) FROM message_labels l WHERE l.message_id = messages.id) AS labels")
_QUOTES = ("(SELECT instr(replace(messages.body, char(13), ''), replace('---------- Forwarded message ----------' "
           "|| char(10) || 'From: ' || o.from_name || ' <' || o.from_email || '>' || char(10) || 'Date: ' || o.sent_at "
           "|| char(10) || 'Subject: ' || o.subject || char(10) || 'To: ' || o.to_addrs || char(10) || char(10) "
           "|| o.body, char(13), '')) > 0 FROM messages o WHERE o.id = messages.forwarded_from) AS quotes_original")
#: leaving the message for the compose form is a step forward (version 1: progress fell there)
_COMPOSE = {"check": "a compose form is open", "get": {"kind": "url", "part": "path"},
            "expect": {"op": "regex", "pattern": "^/compose"}}
_TEXTS = ["Thanks, I'll get back to you by Friday.", "Sounds good, see you then.", "Received, thank you!",
          "Can we talk about this tomorrow?", "Noted, I'll take care of it."]

STAR = Part(
    "star", "star {it}", ({"click": "button[data-action=star]"},),
    ({"check": "the message is starred", "get": {"kind": "app_state", "path": f"messages[id={_M}].starred"},
      "expect": {"op": "equals", "value": True}},),
    (f"messages[id={_M}].starred",), where="AND m.starred = 0", own_row=True,
    # the message's own star: the inbox list has a star per row, and the first row's read as this one's
    subgoals=({"check": "the star is on", "get": {"kind": "dom", "selector": f'form[action="/message/{_M}/star"] '
                                                                          "button[data-action=star]",
                                                "prop": "attr", "attr": "aria-pressed"},
             "expect": {"op": "equals", "value": "true"}},),
    skills=("button",))

LABEL = Part(
    "label", 'add the label "{label.name}" to {it}',
    ({"select": {"selector": "select[name=label_id]", "option": "{label.name}"}},
     {"click": "button[data-action=apply-label]"}),
    ({"check": "the message has the label, and keeps its other labels",
      "get": {"kind": "sql", "scalar": True, "params": [_M],
              "query": "SELECT COALESCE(group_concat(label_id, ' '), '') FROM (SELECT label_id FROM message_labels "
                       "WHERE message_id = ? ORDER BY label_id)"},
      "expect": {"op": "equals", "value": "{labels_after.t}"}},),
    (f"messages[id={_M}].labels",),
    params=(("label", _rows("SELECT id, name FROM labels WHERE id NOT IN (SELECT label_id FROM message_labels "
                            "WHERE message_id = ?) ORDER BY id", _M)),
            ("labels_after", _rows("SELECT group_concat(label_id, ' ') AS t FROM (SELECT label_id FROM (SELECT label_id "
                                   "FROM message_labels WHERE message_id = ? UNION SELECT ?) ORDER BY label_id)",
                                   _M, "{label.id}"))),
    subgoals=(select_subgoal("select[name=label_id]", "{label.name}"),),
    wrong=({"select": {"selector": "select[name=label_id]", "option": "{wrong_label.name}"}},
           {"click": "button[data-action=apply-label]"}),
    wrong_params=(("wrong_label", _rows("SELECT id, name FROM labels WHERE id NOT IN (SELECT label_id FROM "
                                        "message_labels WHERE message_id = ?) AND id != ? ORDER BY id",
                                        _M, "{label.id}")),),
    skills=("select",))

ARCHIVE = Part(
    "archive", "archive {it}", ({"click": "button[data-action=archive]"},),
    ({"check": "the message is in the archive", "get": {"kind": "app_state", "path": f"messages[id={_M}].folder"},
      "expect": {"op": "equals", "value": "archive"}},),
    (f"messages[id={_M}].folder",), where="AND m.folder = 'inbox'", leaves=True, own_row=True,
    excludes=("AND m.folder = 'archive'", "AND m.folder = 'inbox'"),  # archived already; the same rows as "any"
    wrong=({"click": "button[data-action=delete]"},), skills=("button",))

REPLY = Part(
    "reply", "reply to {it} with exactly this text: {text}",
    ({"click": "a[data-action=reply]"}, {"fill": {"selector": "textarea[name=body]", "text": "{text}"}},
     {"click": "button[name=action][value=send]"}),
    ({"check": "one reply went to the sender, with the text and nothing else",
      "get": {"kind": "sql", "params": ["{m.subject}", "{m.subject}", _M],
              "query": "SELECT folder, to_addrs, cc_addrs, body, (same_text(subject, ?) OR same_text(subject, 'Re: ' "
                       "|| ?)) AS subject_kept, forwarded_from, starred, " + _SENT_ROW +
                       " FROM messages WHERE in_reply_to = ? AND folder != 'drafts'"},
      "expect": {"op": "table", "rows": [{"folder": "sent", "to_addrs": "{m.from_email}", "cc_addrs": "",
                                          "body": "{text}", "subject_kept": 1, "forwarded_from": None, "starred": 0,
                                          "attachments": 0, "labels": 0}],
                 "normalize": {"body": "text", "to_addrs": "email"}}},
     {"check": "no labels on any reply", "get": {"kind": "app_state", "path": f"messages[in_reply_to={_M}][*].labels[*]"},
      "expect": {"op": "length", "max": 0}},
     {"check": "and no attachments", "get": {"kind": "app_state",
                                             "path": f"messages[in_reply_to={_M}][*].attachments[*]"},
      "expect": {"op": "length", "max": 0}}),
    (f"messages[in_reply_to={_M}][folder!=drafts]",),
    params=(("text", {"type": "string", "values": _TEXTS}),),
    subgoals=(_COMPOSE, {"check": "the reply holds the text", "get": {"kind": "dom", "selector": "textarea[name=body]",
                                                                      "prop": "value"},
                         "expect": {"op": "text", "value": "{text}"}}),
    leaves=True,
    wrong=({"click": "a[data-action=compose]"}, {"fill": {"selector": "input[name=to]", "text": "{m.from_email}"}},
           {"fill": {"selector": "input[name=subject]", "text": "Re: {m.subject}"}},
           {"fill": {"selector": "textarea[name=body]", "text": "{text}"}},
           {"click": "button[name=action][value=send]"}),
    skills=("form",))

FORWARD = Part(
    "forward", "forward {it} to {p.name} (the address is on the Contacts page)",
    ({"click": "a[data-action=forward]"}, {"fill": {"selector": "input[name=to]", "text": "{p.email}"}},
     {"click": "button[name=action][value=send]"}),
    ({"check": "the forward went out to them alone",
      "get": {"kind": "app_state", "path": f"messages[forwarded_from={_M}][*].to"},
      "expect": {"op": "equals", "value": [["{p.email}"]], "type": "email"}},
     {"check": "one forward, quoting the original, its attachments kept and nothing else set",
      "get": {"kind": "sql", "params": ["{m.subject}", "{m.subject}", _M],
              "query": "SELECT folder, cc_addrs, (same_text(subject, 'Fwd: ' || ?) OR same_text(subject, ?)) AS "
                       f"subject_kept, {_QUOTES}, in_reply_to IS NOT NULL AS is_reply, starred, " + _SENT_ROW +
                       " FROM messages WHERE forwarded_from = ?"},
      "expect": {"op": "table", "rows": [{"folder": "sent", "cc_addrs": "", "subject_kept": 1, "quotes_original": 1,
                                          "is_reply": 0, "starred": 0, "attachments": 0, "labels": 0}]}},
     {"check": "no labels on any forward", "get": {"kind": "app_state",
                                                   "path": f"messages[forwarded_from={_M}][*].labels[*]"},
      "expect": {"op": "length", "max": 0}},
     {"check": "and no attachments (the original has none)",
      "get": {"kind": "app_state", "path": f"messages[forwarded_from={_M}][*].attachments[*]"},
      "expect": {"op": "length", "max": 0}}),
    (f"messages[forwarded_from={_M}]",), where=_NO_ATT, excludes=(_ATT,),
    params=(("p", _rows("SELECT name, email FROM people WHERE email != ? AND name NOT IN (SELECT name FROM people "
                        "GROUP BY name HAVING COUNT(*) > 1) ORDER BY id", "{m.from_email}")),),
    subgoals=(_COMPOSE, {"check": "the forward is addressed to them",
                         "get": {"kind": "dom", "selector": "input[name=to]", "prop": "value"},
                         "expect": {"op": "text", "value": "{p.email}"}}),
    leaves=True,
    wrong=({"click": "a[data-action=forward]"}, {"fill": {"selector": "input[name=to]", "text": "{q.email}"}},
           {"click": "button[name=action][value=send]"}),
    wrong_params=(("q", _rows("SELECT name, email FROM people WHERE email NOT IN (?, ?) ORDER BY id",
                              "{m.from_email}", "{p.email}")),),
    skills=("lookup", "form"))

PARTS = {p.name: p for p in (STAR, LABEL, ARCHIVE, REPLY, FORWARD)}

#: questions a chain may end with: (name, words, the message's column, comparator)
QUESTIONS = {"sender_email": ("the sender's email address", "from_email", "email"),
             "sender": ("who sent it (their name)", "from_name", "text")}


def _phrase(parts: Sequence[Part], ask: str | None) -> list[str]:
    label = MESSAGE.label
    first = parts[0].says.replace("{it}", label)
    rest = [p.says.replace("{it}", "it") for p in parts[1:]]
    verbs = [first, *rest]
    listed = verbs[0] if len(verbs) == 1 else ", ".join(verbs[:-1]) + " and then " + verbs[-1]
    steps = "; ".join(f"{i + 1}. {v}" for i, v in enumerate(verbs))
    tail = "" if ask is None else f" Then tell me {QUESTIONS[ask][0]}, with nothing else in the answer."
    tail_b = "" if ask is None else f" Finally, answer with {QUESTIONS[ask][0]} alone."
    cap = listed[:1].upper() + listed[1:]
    return [f"{cap}.{tail}", f"Please do this with {label}: {steps}.{tail_b}",
            f"I need you to {listed}. Leave everything else as it is.{tail}"]


def chain(parts: Sequence[Part], ask: str | None = None) -> Operation:
    """One part, or a chain of 2 to 5 on one message (and at most a question after them). The near miss
    of one part is its wrong version (or the part done to another message); of a chain, every part but
    the last; of a chain with a question, every part and another message's value for the answer.

    Subgoals are in order and a later one reached counts those before it: a part's checkpoint in the
    page (a field that holds the text) is gone once the part leaves the page, so each part ends with a
    subgoal on the state it made (version 1 without it: judge QA saw progress fall after a send)."""
    if not 1 <= len(parts) <= 5:
        raise ValueError("a chain holds 1 to 5 parts")

    def op(scope: str) -> dict[str, Any] | None:
        if any(scope in p.excludes for p in parts):
            return None
        own = any(p.own_row for p in parts)
        if not own and scope in (_UNREAD, _READ_ONLY):
            # opening an unread message marks it read, an incidental change; where no part changes the row
            # itself, judge QA's wrong-target probe moves that change to another message and the judge, rightly
            # blind to which messages were looked at, passes (versions 2 and 3: 1 of --count 20 each): those draw
            # a read message, so the read scope is "any" again
            return None
        where = " ".join([p.where for p in parts if p.where] + ([] if own else [_READ_ONLY]))
        params: dict[str, Any] = {"m": MESSAGE.rows(scope, where)}
        for p in parts:
            params.update(dict(p.params))
        steps: list[dict[str, Any]] = [*MESSAGE.open]
        near: list[dict[str, Any]] = []
        after = False
        for i, p in enumerate(parts):
            if after:
                steps.append({"goto": "/message/{m.id}"})
            if i == len(parts) - 1:
                near = list(steps)
            steps += p.steps
            after = p.leaves
        subgoals = [{"check": "the message is open", "get": {"kind": "url", "part": "path"},
                     "expect": {"op": "regex", "pattern": MESSAGE.path}}]
        for p in parts:  # a part's checkpoint in the page, then its first check: a state that stays once reached
            subgoals += [*p.subgoals, {**p.checks[0], "check": f"{p.name}: done"}]
        checks = [c for p in parts for c in p.checks]
        changes = [c for p in parts for c in p.changes]
        oracle = list(steps)
        if ask is not None:
            _, col, cmp = QUESTIONS[ask]
            params["other"] = _rows(f"SELECT id, {col} AS v FROM messages WHERE {col} != ? AND folder != 'trash' "
                                    "ORDER BY id", "{m." + col + "}")
            checks.append({"check": f"the answer is {QUESTIONS[ask][0]}", "get": {"kind": "answer"},
                           "expect": {"op": cmp, "value": "{m." + col + "}"}})
            oracle.append({"done": {"answer": "{m." + col + "}"}})
            near = [*steps, {"done": {"answer": "{other.v}"}}]
        elif len(parts) == 1:
            p = parts[0]
            if p.wrong is not None:
                near = [*MESSAGE.open, *p.wrong]
                params.update(dict(p.wrong_params))
            else:
                params["other"] = MESSAGE.rows("", p.where + " AND m.id != ?", [_M])
                near = [*_open_other("other"), *p.steps]
        judge: dict[str, Any] = {**_READ, "subgoals": subgoals, "checks": checks, "expected_changes": changes}
        skills = ["search", *dict.fromkeys(s for p in parts for s in p.skills)]
        if len(parts) > 1:
            skills.append("multi_step")
        if ask is not None:
            skills += ["read", "answer"]
        return {
            "phrasings": _phrase(parts, ask),
            "params": params,
            "judge": judge,
            "oracle": oracle,
            "near_miss": near,
            "max_steps": 15 + 8 * len(parts),
            "tags": {"skills": skills, "tier": min(4, 1 + len(parts) + (ask is not None))},
        }
    return op


def find_sender_email(scope: str) -> dict[str, Any] | None:
    """A question about one message: its sender's address; the near miss answers another sender's. The
    message is one already read: opening an unread one marks it read, an incidental change judge QA's
    wrong-target probe moves to another message, which a question's judge cannot tell (version 1)."""
    if scope in (_UNREAD, _READ_ONLY):
        return None
    return {
        "phrasings": [f"What is the email address of the sender of {MESSAGE.label}? Answer with just the address.",
                      f"Look up {MESSAGE.label} and tell me the address it came from.",
                      f"Find {MESSAGE.label}; reply with the sender's email address and nothing else."],
        "params": {"m": MESSAGE.rows(scope, _READ_ONLY),
                   "other": _rows("SELECT DISTINCT from_email AS v FROM messages WHERE from_email NOT IN (?, ?) "
                                  "ORDER BY v", "{m.from_email}", ME)},
        "judge": {**_READ, "subgoals": [{"check": "the message is open", "get": {"kind": "url", "part": "path"},
                                         "expect": {"op": "regex", "pattern": MESSAGE.path}}],
                  "checks": [{"check": "the answer is the sender's address", "get": {"kind": "answer"},
                              "expect": {"op": "email", "value": "{m.from_email}"}}],
                  "expected_changes": []},
        "oracle": [*MESSAGE.open, {"done": {"answer": "{m.from_email}"}}],
        "near_miss": [*MESSAGE.open, {"done": {"answer": "{other.v}"}}],
        "max_steps": 12,
        "tags": {"skills": ["search", "read", "answer"], "tier": 2},
    }


def purge(scope: str) -> dict[str, Any]:
    """Delete a message, then delete it forever from the trash: it is gone, and the history shows it went
    through the trash by the agent's hand; the near miss leaves it in the trash."""
    to_trash = [*MESSAGE.open, {"click": "button[data-action=delete]"}, {"click": "a[data-folder=trash]"},
                {"click": 'tr[data-id="{m.id}"] a[data-field=subject]'}]
    return {
        "phrasings": [f"Delete {MESSAGE.label}, then delete it for good from the trash as well. Nothing else.",
                      f"Get rid of {MESSAGE.label} permanently: delete it and then remove it from the trash too.",
                      f"Move {MESSAGE.label} to the trash and then purge it from there forever."],
        "params": {"m": MESSAGE.rows(scope)},
        "judge": {**_READ,
                  "subgoals": [{"check": "the message is open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": MESSAGE.path}},
                               {"check": "it is in the trash", "get": {"kind": "app_state",
                                                                       "path": f"messages[id={_M}].folder"},
                                "expect": {"op": "equals", "value": "trash"}},
                               {"check": "it is gone", "get": {"kind": "app_state", "path": f"messages[id={_M}]"},
                                "expect": {"op": "absent"}}],
                  "checks": [{"check": "the message is gone", "get": {"kind": "app_state", "path": f"messages[id={_M}]"},
                              "expect": {"op": "absent"}},
                             {"check": "the history shows it deleted to the trash first",
                              "get": {"kind": "sql", "scalar": True, "params": [_M],
                                      "query": "SELECT COUNT(*) > 0 FROM cua_activity WHERE (request = 'POST /message/' || ? "
                                               "|| '/delete' OR request = 'POST /bulk') AND instr(changes, "
                                               "'\"after\": \"trash\"') > 0"},
                              "expect": {"op": "equals", "value": 1}}],
                  # the history holds the move to the trash, which the end state no longer shows
                  "expected_changes": [f"messages[id={_M}]", f"messages[id={_M}].folder"]},
        "oracle": [*to_trash, {"click": "button[data-action=purge]"}, {"wait_for": "#purge-modal button[type=submit]"},
                   {"click": "#purge-modal button[type=submit]"}],
        "near_miss": [*to_trash],
        "max_steps": 20,
        "tags": {"skills": ["search", "navigate", "modal", "safety"], "tier": 3},
    }


#: what a scope means to a sender's mail, where a bulk or a count can honour it
_SENDER_SCOPES = {"": "", SCOPES[6][1]: "in:inbox ", SCOPES[7][1]: "in:archive "}
_FOLDER_SQL = {"": "folder != 'trash'", SCOPES[6][1]: "folder = 'inbox'", SCOPES[7][1]: "folder = 'archive'"}
_FOLDER_WORDS = {"": "", SCOPES[6][1]: " in your inbox", SCOPES[7][1]: " in your archive"}
_FOLDER_PATH = {"": "[folder!=trash]", SCOPES[6][1]: "[folder=inbox]", SCOPES[7][1]: "[folder=archive]"}

#: every message's read flag but those of the rows a bulk changes (`{sel}`, its params after none)
_OTHERS_READ = ("SELECT COALESCE(group_concat(id || ':' || read, ' '), '') AS t FROM (SELECT id, read FROM messages "
                "WHERE NOT ({sel}) ORDER BY id)")


def bulk_unread_from(scope: str) -> dict[str, Any] | None:
    """Bulk with a filter: mark every read message of one sender (in the scope's folder, the trash aside)
    unread, through a search and select-all; the near miss marks one of them. Every other message keeps
    its flag. (The seed leaves few messages unread -- 2 to 6 -- so a bulk the other way draws nothing.)"""
    if scope not in _SENDER_SCOPES:
        return None
    folder = _FOLDER_SQL[scope]
    sel = f"from_email = ? AND {folder}"
    n = f"(SELECT COUNT(*) FROM messages x WHERE x.from_email = p.email AND x.{folder}"
    search = f"from:{{p.email}} {_SENDER_SCOPES[scope]}is:read"
    return {
        "phrasings": [f"Mark every email from {{p.name}}{_FOLDER_WORDS[scope] or ' (Trash aside)'} as unread. Leave all "
                      "other emails as they are.",
                      f"All the mail {{p.name}} sent me{_FOLDER_WORDS[scope]} should show as unread again; only theirs.",
                      f"Use a search to find {{p.name}}'s emails{_FOLDER_WORDS[scope] or ' outside the trash'} and mark "
                      "them all unread at once."],
        "params": {"p": _rows(f"SELECT p.name, p.email, {n} AND x.read = 1) AS n_read FROM people p "
                              "WHERE n_read BETWEEN 2 AND 40 AND p.name NOT IN (SELECT name FROM people GROUP BY name "
                              "HAVING COUNT(*) > 1) ORDER BY p.id"),
                   "one": _rows(f"SELECT id FROM messages WHERE {sel} AND read = 1 ORDER BY id", "{p.email}"),
                   "others": _rows(_OTHERS_READ.format(sel=sel), "{p.email}")},
        "judge": {"subgoals": [{"check": "their mail is listed", "get": {"kind": "url", "part": "query"},
                                "expect": {"op": "regex", "pattern": "q="}}],
                  "checks": [{"check": "none of their emails is read",
                              "get": {"kind": "sql", "scalar": True, "params": ["{p.email}"],
                                      "query": f"SELECT COUNT(*) FROM messages WHERE {sel} AND read = 1"},
                              "expect": {"op": "equals", "value": 0}},
                             {"check": "every other email keeps its read flag",
                              "get": {"kind": "sql", "scalar": True, "params": ["{p.email}"],
                                      "query": _OTHERS_READ.format(sel=sel)},
                              "expect": {"op": "equals", "value": "{others.t}"}}],
                  "expected_changes": [f"messages[from_email={{p.email}}]{_FOLDER_PATH[scope]}.read"]},
        "oracle": [{"fill": {"selector": "input[name=q]", "text": search, "submit": True}},
                   {"click": "#select-all"}, {"click": "button[name=op][value=unread]"}],
        "near_miss": [{"fill": {"selector": "input[name=q]", "text": search, "submit": True}},
                      {"click": 'tr[data-id="{one.id}"] input[name=ids]'}, {"click": "button[name=op][value=unread]"}],
        "max_steps": 15,
        "tags": {"skills": ["search", "bulk_select", "safety"], "tier": 3},
    }


#: subject words a bulk by subject filters on (each is in several of the seed's subject patterns' forms)
_SUBJECT_WORDS = ["status update", "budget review", "Invoice", "Weekly digest", "Lunch on", "Hotel booking",
                  "Flight confirmation", "Meeting notes", "has shipped", "Receipt for", "Expense report",
                  "Contract renewal", "Interview schedule", "Birthday plans", "Weekend hike", "review my PR"]
_WORDS_SQL = "(VALUES " + ", ".join("('" + w + "')" for w in _SUBJECT_WORDS) + ")"


def bulk_unread_subject(scope: str) -> dict[str, Any] | None:
    """Bulk with a filter: mark unread every read message (outside the trash) whose subject holds a
    phrase, through a `subject:` search; the near miss marks one. Every other message keeps its flag."""
    if scope != "":
        return None
    sel = "folder != 'trash' AND subject LIKE '%' || ? || '%'"
    return {
        "phrasings": ['Mark every email whose subject contains "{s.w}" as unread (Trash aside). Touch no other email.',
                      'Search for the emails with "{s.w}" in the subject and mark all of them unread.',
                      'I want to revisit all mail with "{s.w}" in its subject: mark each one unread, and only those.'],
        "params": {"s": _rows("SELECT column1 AS w, (SELECT COUNT(*) FROM messages WHERE folder != 'trash' AND subject "
                              "LIKE '%' || column1 || '%') AS n, (SELECT COUNT(*) FROM messages WHERE folder != 'trash' "
                              "AND read = 1 AND subject LIKE '%' || column1 || '%') AS n_read FROM " + _WORDS_SQL +
                              " WHERE n BETWEEN 2 AND 50 AND n_read >= 2 ORDER BY w"),
                   "one": _rows(f"SELECT id FROM messages WHERE {sel} AND read = 1 ORDER BY id", "{s.w}"),
                   "after": _rows("SELECT COALESCE(group_concat(id || ':' || CASE WHEN subject LIKE '%' || ? || '%' "
                                  "THEN 0 ELSE read END, ' '), '') AS t FROM messages WHERE folder != 'trash'",
                                  "{s.w}")},
        "judge": {"subgoals": [{"check": "the emails are listed", "get": {"kind": "url", "part": "query"},
                                "expect": {"op": "regex", "pattern": "q="}}],
                  "checks": [{"check": "none of them is read",
                              "get": {"kind": "sql", "scalar": True, "params": ["{s.w}"],
                                      "query": f"SELECT COUNT(*) FROM messages WHERE {sel} AND read = 1"},
                              "expect": {"op": "equals", "value": 0}},
                             {"check": "they are unread and every other email keeps its read flag",
                              "get": {"kind": "sql", "scalar": True,
                                      "query": "SELECT COALESCE(group_concat(id || ':' || read, ' '), '') FROM messages "
                                               "WHERE folder != 'trash'"},
                              "expect": {"op": "equals", "value": "{after.t}"}}],
                  # the rows a phrase of the subject names have no path: the second check reads every one's flag
                  "expected_changes": ["messages[folder!=trash].read"]},
        "oracle": [{"fill": {"selector": "input[name=q]", "text": 'subject:"{s.w}"', "submit": True}},
                   {"click": "#select-all"}, {"click": "button[name=op][value=unread]"}],
        "near_miss": [{"fill": {"selector": "input[name=q]", "text": 'subject:"{s.w}"', "submit": True}},
                      {"click": 'tr[data-id="{one.id}"] input[name=ids]'}, {"click": "button[name=op][value=unread]"}],
        "max_steps": 15,
        "tags": {"skills": ["search", "bulk_select", "safety"], "tier": 3},
    }


_DOMAINS = ["northwind.io", "acme-corp.com", "bluepeak.org", "lumen.dev", "harbor.co", "gmail.test", "fastmail.test"]
_DOMAINS_SQL = "(VALUES " + ", ".join("('" + d + "')" for d in _DOMAINS) + ")"


def count_unread(scope: str) -> dict[str, Any] | None:
    """How many unread emails came from the senders of one domain (the trash aside); the near miss counts
    all of theirs. By domain, not by person: the seed leaves 2 to 6 messages unread, so one person's
    unread count is nearly always 0 (an answer an agent would learn to guess)."""
    if scope != "":
        return None
    n = "(SELECT COUNT(*) FROM messages x WHERE x.from_email LIKE '%@' || column1 AND x.folder != 'trash'"
    return {
        "phrasings": ["How many unread emails do I have from people at {d.domain} (Trash aside)? Answer with just "
                      "the number.",
                      "Count the unread emails sent from {d.domain} addresses, leaving the trash out; reply with the "
                      "number.",
                      "Senders at {d.domain}: how many of their emails are still unread? A number only."],
        "params": {"d": _rows(f"SELECT column1 AS domain, {n} AND x.read = 0) AS n, {n}) AS n_all FROM {_DOMAINS_SQL} "
                              "WHERE n >= 1 ORDER BY domain")},
        "judge": {**_READ, "subgoals": [{"check": "a search is open", "get": {"kind": "url", "part": "path"},
                                         "expect": {"op": "regex", "pattern": "^/search"}}],
                  "checks": [{"check": "the answer is the count", "get": {"kind": "answer"},
                              "expect": {"op": "number", "value": "{d.n}"}}],
                  "expected_changes": []},
        "oracle": [{"fill": {"selector": "input[name=q]", "text": "from:@{d.domain} is:unread", "submit": True}},
                   {"wait_for": "[data-range]"}, {"done": {"answer": "{d.n}"}}],
        "near_miss": [{"fill": {"selector": "input[name=q]", "text": "from:@{d.domain}", "submit": True}},
                      {"wait_for": "[data-range]"}, {"done": {"answer": "{d.n_all}"}}],
        "max_steps": 12,
        "tags": {"skills": ["search", "count", "answer"], "tier": 3},
    }


_TOPICS = ["Atlas", "Beacon", "Cobalt", "Delta", "Ember", "Falcon", "Granite", "Helix", "Juniper", "Lisbon", "Berlin",
           "Osaka", "Toronto", "Nairobi", "Denver", "Oslo", "Madrid", "Seoul", "Dublin", "budget", "invoice", "lunch"]
_TOPICS_SQL = "(VALUES " + ", ".join("('" + w + "')" for w in _TOPICS) + ")"


def latest_about(scope: str) -> dict[str, Any] | None:
    """Who sent the latest email (received, outside the trash) whose subject names a topic; the near miss
    names the sender of the one before it."""
    if scope != "":
        return None
    ranked = ("(SELECT {col} FROM messages WHERE folder != 'trash' AND from_email != '" + ME + "' "
              "AND subject LIKE '%' || column1 || '%' ORDER BY sent_at DESC, id DESC LIMIT 1 OFFSET {k})")
    who, before = ranked.format(col="from_name", k=0), ranked.format(col="from_name", k=1)
    at1, at2 = ranked.format(col="sent_at", k=0), ranked.format(col="sent_at", k=1)
    return {
        "phrasings": ['Who sent me the most recent email about "{t.w}" (in its subject)? Answer with their name.',
                      'Find the latest email I received with "{t.w}" in the subject and tell me who sent it.',
                      'Of the emails about "{t.w}" (subject), which sender wrote most recently? Reply with the name only.'],
        "params": {"t": _rows(f"SELECT column1 AS w, {who} AS who, {before} AS before FROM {_TOPICS_SQL} "
                              f"WHERE who IS NOT NULL AND before IS NOT NULL AND who != before AND {at1} != {at2} "
                              "ORDER BY w")},
        "judge": {**_READ, "subgoals": [{"check": "a search is open", "get": {"kind": "url", "part": "path"},
                                         "expect": {"op": "regex", "pattern": "^/search"}}],
                  "checks": [{"check": "the answer is the sender of the latest one", "get": {"kind": "answer"},
                              "expect": {"op": "text", "value": "{t.who}"}}],
                  "expected_changes": []},
        "oracle": [{"fill": {"selector": "input[name=q]", "text": 'subject:"{t.w}"', "submit": True}},
                   {"wait_for": "[data-range]"}, {"done": {"answer": "{t.who}"}}],
        "near_miss": [{"fill": {"selector": "input[name=q]", "text": 'subject:"{t.w}"', "submit": True}},
                      {"wait_for": "[data-range]"}, {"done": {"answer": "{t.before}"}}],
        "max_steps": 12,
        "tags": {"skills": ["search", "read", "compare", "answer"], "tier": 3},
    }


#: the chains composed of parts (an archive or a send comes last among those that leave the message's page)
_CHAINS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "star": (("star",), None), "label": (("label",), None), "move:archive": (("archive",), None),
    "reply": (("reply",), None), "forward": (("forward",), None),
    "star+label": (("star", "label"), None), "label+archive": (("label", "archive"), None),
    "star+reply": (("star", "reply"), None), "reply+archive": (("reply", "archive"), None),
    "label+forward": (("label", "forward"), None), "star+label+archive": (("star", "label", "archive"), None),
    "label+reply+archive": (("label", "reply", "archive"), None),
    "star+label+forward+archive": (("star", "label", "forward", "archive"), None),
    "star+label+reply+forward+archive": (("star", "label", "reply", "forward", "archive"), None),
    "label>ask:sender_email": (("label",), "sender_email"), "star+archive>ask:sender": (("star", "archive"), "sender"),
    "reply>ask:sender_email": (("reply",), "sender_email"),
}

OPERATIONS: dict[str, Operation] = {name: chain([PARTS[p] for p in parts], ask) for name, (parts, ask) in _CHAINS.items()}
OPERATIONS.update({"find:sender_email": find_sender_email, "delete+purge": purge, "bulk:unread_from": bulk_unread_from,
                   "bulk:unread_subject": bulk_unread_subject, "count:unread_from": count_unread,
                   "ask:latest_about": latest_about})

DESCRIPTION = Description(app="mail", version=GENERATOR_VERSION, scopes=SCOPES, entities=(), extra=OPERATIONS,
                          test_chains=frozenset({"star+label+archive", "reply+archive", "count:unread_from",
                                                 "label>ask:sender_email"}),
                          start_url="/folder/inbox")
SCHEMA: AppSchema = DESCRIPTION.schema()
