"""Templates for the contacts app (tasks/apps/contacts), described for the generator core.

A contact is drawn among those whose name is unique (the search finds one row), opened by
the table's search, edited in its form (`#save-contact`) and deleted through its
confirmation; the selectors are the hand-written contacts suite's. Its app operations: a
count by owner and tag, and a bulk untag through the table's filters.
"""

from __future__ import annotations

from typing import Any

from cua.synth.schema import AppSchema, Description, Entity, Field, select_subgoal, values_sql

__all__ = ["DESCRIPTION", "GENERATOR_VERSION", "SCHEMA"]

GENERATOR_VERSION = 3  # 2: a company select gets 75 more steps (the oracle ran out of 25)
# 3: an edit that ends with a question (ask_chains)
_C = "{c.id}"

SCOPES: tuple[tuple[str, str], ...] = (
    ("any", ""),
    ("lead", "AND c.status = 'lead'"),
    ("prospect", "AND c.status = 'prospect'"),
    ("customer", "AND c.status = 'customer'"),
    ("churned", "AND c.status = 'churned'"),
    ("dealing", "AND EXISTS (SELECT 1 FROM deals d WHERE d.contact_id = c.id)"),
    ("no_deals", "AND NOT EXISTS (SELECT 1 FROM deals d WHERE d.contact_id = c.id)"),
    ("tagged", "AND EXISTS (SELECT 1 FROM contact_tags ct WHERE ct.contact_id = c.id)"),
    ("untagged", "AND NOT EXISTS (SELECT 1 FROM contact_tags ct WHERE ct.contact_id = c.id)"),
)


def _fill(selector: str) -> Any:
    return lambda p: [{"fill": {"selector": selector, "text": "{" + p + ".v}"}}]


def _holds(selector: str) -> Any:
    return lambda p: {"check": f"{selector} holds the new value", "get": {"kind": "dom", "selector": selector,
                                                                         "prop": "value"},
                      "expect": {"op": "text", "value": "{" + p + ".v}"}}


def _is(op: str, col: str = "v") -> Any:
    return lambda p: {"op": op, "value": "{" + f"{p}.{col}" + "}"}


FIELDS = (
    Field("email", "email address", "email",
          values_sql(["j.doe@newmail.io", "contact@northwind-partners.com", "sales.lead@fastpost.net",
                      "hello@brightside.dev"]),
          _fill("#email"), "SELECT email FROM contacts WHERE id = ?", _is("email"),
          (f"contacts[id={_C}].email",), checkpoint=_holds("#email"), shown="email", answer_op="email"),
    Field("phone", "phone number", "phone", values_sql(["+1 415-555-0134", "+44 20 7946 0958", "(312) 555-0199"]),
          _fill("#phone"), "SELECT phone FROM contacts WHERE id = ?", _is("phone"),
          (f"contacts[id={_C}].phone",), checkpoint=_holds("#phone"), shown="phone", answer_op="phone"),
    Field("title", "job title", "title", values_sql(["Head of IT", "Buyer", "Product Manager", "Office Manager"]),
          _fill("#title"), "SELECT title FROM contacts WHERE id = ?", _is("text"),
          (f"contacts[id={_C}].title",), checkpoint=_holds("#title"), shown="title"),
    Field("status", "status", "status", values_sql(["lead", "prospect", "customer", "churned"]),
          lambda p: [{"click": 'input[name=status][value="{' + p + '.v}"]'}],
          "SELECT status FROM contacts WHERE id = ?", _is("equals"), (f"contacts[id={_C}].status",)),
    Field("company", "company", "company_id", "SELECT id, name AS v FROM companies WHERE id NOT IN ({not_in}) ORDER BY id",
          lambda p: [{"select": {"selector": "select[name=company_id]", "option": "{" + p + ".v}"}}],
          "SELECT company_id FROM contacts WHERE id = ?", _is("equals", "id"),
          (f"contacts[id={_C}].company_id", f"contacts[id={_C}].company"), key="id",
          checkpoint=lambda p: select_subgoal("select[name=company_id]", "{" + p + ".v}"), shown="company",
          extra_steps=75),  # a select of every company: the agent scrolls and types through it
    Field("owner", "owner", "owner_id", "SELECT id, name AS v FROM owners WHERE id NOT IN ({not_in}) ORDER BY id",
          lambda p: [{"click": "#owner .lb-button"}, {"click": '#owner li[data-value="{' + p + '.id}"]'}],
          "SELECT owner_id FROM contacts WHERE id = ?", _is("equals", "id"),
          (f"contacts[id={_C}].owner_id", f"contacts[id={_C}].owner"), key="id", shown="owner"),
)

CONTACT = Entity(
    name="contact", param="c", table="contacts", alias="c",
    rows_sql="SELECT c.id, c.first_name || ' ' || c.last_name AS name, c.email, c.phone, c.title, c.status, c.owner_id, "
             "o.name AS owner, COALESCE(c.company_id, 0) AS company_id, COALESCE(co.name, '') AS company "
             "FROM contacts c JOIN owners o ON o.id = c.owner_id LEFT JOIN companies co ON co.id = c.company_id "
             "WHERE (SELECT COUNT(*) FROM contacts x WHERE x.first_name = c.first_name AND x.last_name = c.last_name) = 1 "
             "{where} ORDER BY c.id",
    label="the contact {c.name}",
    open=({"fill": {"selector": "#filters input[name=q]", "text": "{c.name}", "submit": True}},
          {"click": 'tr[data-id="{c.id}"] a'}),
    edit=({"click": {"selector": ".titlebar a.button", "text": "Edit"}},),
    save=({"click": "#save-contact"}, {"wait_for": ".flash"}),
    path="^/contacts/{c.id}(/|$)",
    fields=FIELDS,
    delete=({"click": {"selector": ".titlebar button.danger", "text_contains": "Delete"}}, {"wait_for": "#delete-confirm"},
            {"click": "#delete-confirm"}),
    cancel_delete=({"click": {"selector": ".titlebar button.danger", "text_contains": "Delete"}},
                   {"wait_for": "#delete-confirm"}, {"click": {"selector": "#delete-modal button", "text": "Cancel"}}),
    delete_changes=("deals[contact_id={c.id}].contact_id",),
    skills=("search", "form"),
    # a contact's deals stay, without their contact (ON DELETE SET NULL): a deletion must not take them along
    guard_params=(("dl", {"type": "rows", "sql": "SELECT COALESCE(group_concat(id), '') AS ids, COUNT(*) AS n "
                                                "FROM deals WHERE contact_id = ?", "params": ["{c.id}"]}),),
    guard_checks=({"check": "its deals are kept, with no contact",
                   "get": {"kind": "sql", "scalar": True, "params": ["{dl.ids}"],
                           "query": "SELECT COUNT(*) FROM deals WHERE contact_id IS NULL "
                                    "AND instr(',' || ? || ',', ',' || id || ',') > 0"},
                   "expect": {"op": "equals", "value": "{dl.n}"}},),
)

_STATUS = {"lead", "prospect", "customer", "churned"}


def _status_of(scope: str) -> str:
    return next((s for s in _STATUS if f"'{s}'" in scope), "")


def count(scope: str) -> dict[str, Any] | None:
    """How many contacts of an owner (of the scope's status) carry a tag; the near miss forgets the owner filter."""
    status = _status_of(scope)
    if scope and not status:
        return None
    cond = f"AND c.status = '{status}'" if status else ""
    who = f"{status} contacts" if status else "contacts"
    n = f"(SELECT COUNT(*) FROM contacts c JOIN contact_tags ct ON ct.contact_id = c.id WHERE ct.tag_id = t.id {cond}"
    steps: list[dict[str, Any]] = [{"select": {"selector": "#filters select[name=owner]", "option": "{o.name}"}},
                                   {"select": {"selector": "#filters select[name=tag]", "option": "{o.tag}"}}]
    if status:
        steps.append({"select": {"selector": "#filters select[name=status]", "option": status}})
    return {
        "phrasings": [f'How many {who} owned by {{o.name}} have the tag "{{o.tag}}"? Answer with just the number.',
                      f'Count the {who} of {{o.name}} tagged "{{o.tag}}" and reply with the number.',
                      f'Of the {who} {{o.name}} owns, how many are tagged "{{o.tag}}"? A number only, please.'],
        "params": {"o": {"type": "rows", "sql": f"SELECT o.id, o.name, t.name AS tag, {n} AND c.owner_id = o.id) AS n, "
                                                f"{n}) AS n_tag FROM owners o, tags t WHERE n >= 2 AND n != n_tag "
                                                "ORDER BY o.id, t.id"}},
        "judge": {"subgoals": [select_subgoal("#filters select[name=owner]", "{o.name}"),
                               select_subgoal("#filters select[name=tag]", "{o.tag}")],
                  "checks": [{"check": "the answer is the count", "get": {"kind": "answer"},
                              "expect": {"op": "number", "value": "{o.n}"}}]},
        "oracle": [*steps, {"click": {"selector": "#filters button", "text": "Apply"}}, {"done": {"answer": "{o.n}"}}],
        "near_miss": [{"done": {"answer": "{o.n_tag}"}}],
        "tags": {"skills": ["filter", "select", "count", "answer"], "tier": 3},
    }


def untag(scope: str) -> dict[str, Any] | None:
    """Bulk with a filter: remove a tag from every contact of one owner (of the scope's status); the near
    miss filters by the tag alone, so other owners' contacts lose it too."""
    status = _status_of(scope)
    if scope and not status:
        return None
    cond = f"AND c.status = '{status}'" if status else ""
    who = f"{status} contact" if status else "contact"
    mine = f"FROM contact_tags ct JOIN contacts c ON c.id = ct.contact_id WHERE c.owner_id = ? {cond}"
    filters: list[dict[str, Any]] = [{"select": {"selector": "#filters select[name=owner]", "option": "{x.owner}"}},
                                     {"select": {"selector": "#filters select[name=tag]", "option": "{x.tag}"}}]
    if status:
        filters.append({"select": {"selector": "#filters select[name=status]", "option": status}})
    bulk = [{"click": {"selector": "#filters button", "text": "Apply"}}, {"click": "#select-page"},
            {"click": "#bulk-tag .lb-button"}, {"click": '#bulk-tag li[data-value="{x.tag}"]'},
            {"click": "#bulk-remove-tag"}, {"wait_for": ".flash"}]
    return {
        "phrasings": [f'Remove the tag "{{x.tag}}" from every {who} owned by {{x.owner}}. Leave everyone else alone.',
                      f'{{x.owner}}\'s {who}s should no longer be tagged "{{x.tag}}": untag them all, nobody else.',
                      f'Strip "{{x.tag}}" off each {who} that {{x.owner}} owns, and only those.'],
        "params": {"x": {"type": "rows", "sql": "SELECT o.id AS owner_id, o.name AS owner, t.id AS tag_id, t.name AS tag, "
                                                f"(SELECT COUNT(*) {mine.replace('?', 'o.id')} AND ct.tag_id = t.id) AS n, "
                                                f"(SELECT COUNT(*) {mine.replace('c.owner_id = ?', 'c.owner_id != o.id')} "
                                                "AND ct.tag_id = t.id) AS n_else "
                                                "FROM owners o, tags t WHERE n BETWEEN 2 AND 25 AND n_else >= 1 "
                                                "ORDER BY o.id, t.id"},
                   "kept": {"type": "rows", "sql": "SELECT COALESCE(group_concat(pair, ' '), '') AS pairs FROM (SELECT "
                                                   "ct.contact_id || ':' || ct.tag_id AS pair FROM contact_tags ct "
                                                   "WHERE NOT (ct.tag_id = ? AND ct.contact_id IN (SELECT c.id FROM "
                                                   f"contacts c WHERE c.owner_id = ? {cond})) ORDER BY pair)",
                            "params": ["{x.tag_id}", "{x.owner_id}"]}},
        "judge": {"subgoals": [select_subgoal("#filters select[name=owner]", "{x.owner}"),
                               {"check": "the page of them is selected",
                                "get": {"kind": "dom", "selector": "#select-page", "prop": "checked"},
                                "expect": {"op": "equals", "value": True}}],
                  "checks": [{"check": "every other tag of every contact is kept, and theirs is gone",
                              "get": {"kind": "sql", "scalar": True,
                                      "query": "SELECT COALESCE(group_concat(pair, ' '), '') FROM (SELECT ct.contact_id "
                                               "|| ':' || ct.tag_id AS pair FROM contact_tags ct ORDER BY pair)"},
                              "expect": {"op": "equals", "value": "{kept.pairs}"}}],
                  "expected_changes": ["contacts[owner_id={x.owner_id}].tags"]},
        "oracle": [*filters, *bulk],
        "near_miss": [filters[1], *bulk],
        "tags": {"skills": ["filter", "bulk_select", "custom_dropdown", "safety"], "tier": 4},
    }


DESCRIPTION = Description(app="contacts", version=GENERATOR_VERSION, scopes=SCOPES, entities=(CONTACT,),
                          extra={"count": count, "bulk:untag": untag},
                          test_chains=frozenset({"edit:owner", "edit:email+status", "count", "find:phone"}),
                          start_url="/contacts", chain_sizes=(2, 3, 5),
                          chain_fields=("email", "phone", "title", "status", "company"),
                          ask_chains=(("title", "email"), ("status", "phone")))
SCHEMA: AppSchema = DESCRIPTION.schema()
