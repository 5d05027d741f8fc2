"""Stored text is judged with its case; the agent's answer without it.

A title the app stores is shown to every user as stored: "WEEKLY PLAN" is another title
than "Weekly plan", as '"Weekly plan"' with its quotes is. The agent's answer is text it
writes back to the user, whose case and enclosing quotes carry no meaning. An outside
probe (a note renamed to the right title in capitals) passed before stored text kept case.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cua.actions import Done
from cua.judges import spec as S
from cua.judges.judge import StateJudge
from cua.state import AppStateQuery, StateResult
from cua.task import JudgeInput, query_key

APP_KEY = query_key(AppStateQuery())


def _verdict(get: dict[str, object], expect: dict[str, object], stored: object = None, answer: str | None = None) -> bool:
    spec = S.JudgeSpec.model_validate({"checks": [{"check": "c", "get": get, "expect": expect}]})
    state = {APP_KEY: StateResult(value={"notes": [{"id": 1, "title": stored}]})}
    done = Done(answer=answer) if answer is not None else None
    return StateJudge(spec).evaluate(JudgeInput(initial=state, final=state, done=done)).passed


STORED = {"kind": "app_state", "path": "notes[id=1].title"}
ANSWER = {"kind": "answer"}

titles = st.text(alphabet=st.characters(whitelist_categories=("Lu", "Ll"), max_codepoint=0x17F), min_size=2, max_size=12)


@settings(max_examples=40, deadline=None)
@given(titles)
def test_a_stored_title_in_other_case_fails_and_the_same_title_passes(word: str) -> None:
    title = f"Weekly {word}"
    assert _verdict(STORED, {"op": "text", "value": title}, stored=title)
    assert _verdict(STORED, {"op": "text", "value": title}, stored=f"  {title} ")  # the app trims what is typed
    for other in {title.upper(), title.lower(), title.swapcase()} - {title}:
        assert not _verdict(STORED, {"op": "text", "value": title}, stored=other), other


def test_a_stored_title_keeps_its_quotes() -> None:
    assert not _verdict(STORED, {"op": "text", "value": "Weekly plan"}, stored='"Weekly plan"')


def test_a_template_may_judge_stored_text_case_aside() -> None:
    assert _verdict(STORED, {"op": "text", "value": "Weekly plan", "case": False}, stored="WEEKLY PLAN")


def test_the_same_rule_reads_sql_values() -> None:
    spec = S.JudgeSpec.model_validate({"checks": [{"check": "c", "expect": {"op": "text", "value": "Weekly plan"},
                                                    "get": {"kind": "sql", "query": "SELECT title FROM notes",
                                                            "scalar": True}}]})
    node = spec.checks[0]
    assert isinstance(node, S.CheckNode) and isinstance(node.expect, S.TextCmp) and node.expect.case


def test_an_answer_is_judged_case_and_enclosing_quotes_aside() -> None:
    assert _verdict(ANSWER, {"op": "text", "value": "Weekly plan"}, answer='"WEEKLY PLAN"')
    assert not _verdict(ANSWER, {"op": "text", "value": "Weekly plan"}, answer="Weekly plans")
