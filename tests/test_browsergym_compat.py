"""BrowserGym-compatible environments: an agent written to BrowserGym's interface, using
BrowserGym's own observation utilities, solves cua MiniWoB++ tasks unchanged; its action
strings are parsed, never executed."""

from __future__ import annotations

import re
from typing import Any

import pytest

from cua.actions import ClickElement, Done, Key, Scroll, Type
from cua.compat.browsergym_actions import BrowserGymActionError, parse_browsergym_action


class AxtreeAgent:
    """An AgentLab-style agent: BrowserGym's `Agent` interface (`obs_preprocessor`,
    `get_action(obs) -> (action, agent_info)`), reading the tree through BrowserGym's own
    `flatten_axtree_to_str` and answering with BrowserGym action strings."""

    def obs_preprocessor(self, obs: dict[str, Any]) -> dict[str, Any]:
        from browsergym.utils.obs import flatten_axtree_to_str

        return {**obs, "axtree_txt": flatten_axtree_to_str(obs["axtree_object"],
                                                           extra_properties=obs["extra_element_properties"])}

    def get_action(self, obs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        goal, tree = obs["goal"], obs["axtree_txt"]

        def bid(role: str, name: str) -> str:
            match = re.search(rf"\[(\w+)\] {role} '{re.escape(name)}'", tree)
            assert match, f"no {role} {name!r} in\n{tree}"
            return match.group(1)

        if m := re.match(r'Click on the "(.+)" button', goal):
            return f'click("{bid("button", m.group(1))}")', {"think": "the named button"}
        if m := re.match(r'Enter "(.+)" into the text field and press Submit', goal):
            field = re.search(r"\[(\w+)\] textbox", tree)
            assert field, tree
            return f'fill("{field.group(1)}", "{m.group(1)}")\nclick("{bid("button", "Submit")}")', {}
        raise AssertionError(f"this agent does not know the goal {goal!r}")


@pytest.mark.slow
@pytest.mark.parametrize("task,seeds", [("miniwob.click_button@1", [0, 1, 2]), ("miniwob.enter_text@1", [0, 1])])
def test_a_browsergym_agent_solves_cua_miniwob_tasks(task: str, seeds: list[int]) -> None:
    from cua.compat.browsergym import BrowserGymEnv

    agent = AxtreeAgent()
    env = BrowserGymEnv(task)
    try:
        for seed in seeds:
            obs, info = env.reset(seed=seed)
            assert obs["goal"] and obs["chat_messages"][-1]["message"] == obs["goal"]
            assert obs["screenshot"].shape == (env.env.frame.height, env.env.frame.width, 3)
            assert obs["extra_element_properties"] and obs["last_action_error"] == ""
            action, _ = agent.get_action(agent.obs_preprocessor(obs))
            obs, reward, terminated, truncated, info = env.step(action)
            assert obs["last_action_error"] == "", obs["last_action_error"]
            assert terminated and not truncated, (action, info)
            assert info["verdict"].passed and reward == 1.0, info["verdict"]
    finally:
        env.close()


@pytest.mark.slow
def test_a_bad_action_string_is_reported_and_the_episode_goes_on() -> None:
    from cua.compat.browsergym import BrowserGymEnv

    env = BrowserGymEnv("miniwob.click_button@1")
    try:
        obs, _ = env.reset(seed=0)
        obs, reward, terminated, _, _ = env.step('__import__("os").system("touch /tmp/pwned")')
        assert "only function calls" in obs["last_action_error"] or "unknown action" in obs["last_action_error"]
        assert not terminated and reward == 0
        obs, _, terminated, _, _ = env.step('click("e99999")')
        assert "no element" in obs["last_action_error"] and not terminated
        agent = AxtreeAgent()
        action, _ = agent.get_action(agent.obs_preprocessor(obs))
        _, reward, terminated, _, _ = env.step(action)
        assert terminated and reward == 1.0
    finally:
        env.close()


def test_strings_parse_into_unified_actions() -> None:
    elements = {"a1": {"id": "a1", "role": "checkbox", "name": "x", "states": ["checked"],
                       "bbox": {"x": 10, "y": 10, "width": 10, "height": 10}},
                "a2": {"id": "a2", "role": "checkbox", "name": "y",
                       "bbox": {"x": 100, "y": 50, "width": 20, "height": 10}}}
    assert parse_browsergym_action('click("a2")') == [ClickElement(element="a2")]
    assert parse_browsergym_action("fill('a2', 'Alice')") == [ClickElement(element="a2"),
                                                             Key(keys=["Control", "a"]), Type(text="Alice")]
    assert parse_browsergym_action('check("a1")', elements=elements) == []
    assert parse_browsergym_action('check("a2")', elements=elements) == [ClickElement(element="a2")]
    assert parse_browsergym_action('uncheck("a1")', elements=elements) == [ClickElement(element="a1")]
    drag = parse_browsergym_action('drag_and_drop("a1", "a2")', elements=elements)[0]
    assert [(p.x, p.y) for p in drag.path] == [(15, 15), (110, 55)]  # type: ignore[union-attr]
    assert parse_browsergym_action("scroll(0, 200)", viewport=(800, 600)) == [Scroll(x=400, y=300, dy=200)]
    assert parse_browsergym_action('send_msg_to_user("42")') == [Done(status="success", answer="42")]
    assert parse_browsergym_action('press("a2", "Control+a")')[1] == Key(keys=["Control", "a"])
    assert len(parse_browsergym_action('click("a1")\nkeyboard_type("hi")')) == 2


@pytest.mark.parametrize("text,message", [
    ('__import__("os").system("id")', "only function calls"),
    ('os.system("id")', "only function calls"),
    ("click(open('/etc/passwd').read())", "must be literals"),
    ("x = 1", "only function calls"),
    ("exec('print(1)')", "unknown action exec()"),
    ("new_tab()", "not supported in cua"),
    ("click(", "not a valid action"),
    ('keyboard_press("NoSuchKey")', "keyboard_press()"),
    ('click("a b")', "click()"),
    ("", "empty action"),
])
def test_anything_but_a_literal_call_is_refused(text: str, message: str) -> None:
    with pytest.raises(BrowserGymActionError, match=re.escape(message)):
        parse_browsergym_action(text)
