"""BrowserGym-compatible environments: an agent written to BrowserGym's interface, using
BrowserGym's own observation utilities, solves cua MiniWoB++ tasks unchanged; its action
strings are parsed, never executed."""

from __future__ import annotations

import re
from collections.abc import Iterator
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


def _subtree(axtree: dict[str, Any], node: dict[str, Any]) -> list[dict[str, Any]]:
    """The node's descendants in document order, by the tree's own childIds."""
    by_id = {n["nodeId"]: n for n in axtree["nodes"]}
    out: list[dict[str, Any]] = []
    for child in node.get("childIds", ()):
        if child in by_id:
            out += [by_id[child], *_subtree(axtree, by_id[child])]
    return out


@pytest.fixture(scope="module")
def shop_home() -> Iterator[tuple[Any, dict[str, Any]]]:
    """A BrowserGym env on the shop's home page (eight product cards), and its first observation."""
    from cua.compat.browsergym import BrowserGymEnv

    env = BrowserGymEnv("shop.infeasible_coupon@1")
    try:
        obs, _ = env.reset(seed=0)
        yield env, obs
    finally:
        env.close()


def _dom_txt(obs: dict[str, Any]) -> str:
    """AgentLab's default DOM preprocessing, unchanged."""
    from browsergym.utils.obs import flatten_dom_to_str

    return str(flatten_dom_to_str(obs["dom_object"], extra_properties=obs["extra_element_properties"], with_visible=True,
                                  with_clickable=True, with_center_coords=True, with_bounding_box_coords=True))


def _cards(dom_txt: str) -> list[tuple[str, str, str]]:
    """(name, price, add-to-cart bid) of each product card, as the page's DOM has them."""
    from bs4 import BeautifulSoup

    return [(str(a["data-name"]), a.select(".price")[0].get_text(strip=True), str(a.select("button.add")[0]["bid"]))
            for a in BeautifulSoup(dom_txt, "lxml").select("article.product")]


@pytest.mark.slow
def test_browsergym_flattens_the_dom_of_a_cua_page(shop_home: tuple[Any, dict[str, Any]]) -> None:
    """BrowserGym's (and AgentLab's) DOM utilities on a cua observation: the page's own
    elements, each interactive one with its cua element id as its `bid`, one that acts."""
    from browsergym.utils.obs import flatten_axtree_to_str, overlay_som, prune_html
    from bs4 import BeautifulSoup

    env, obs = shop_home
    extra = obs["extra_element_properties"]
    dom_txt = _dom_txt(obs)
    pruned = prune_html(dom_txt)
    overlay_som(obs["screenshot"], extra_properties=extra)
    dom_bids = {tag["bid"] for tag in BeautifulSoup(dom_txt, "lxml").select("[bid]")}
    cua_ids = {n["id"] for n in env.unwrapped_cua.episode.observation.axtree or () if "id" in n}
    tree_bids = {n["browsergym_id"] for n in obs["axtree_object"]["nodes"] if "browsergym_id" in n}
    assert dom_bids == tree_bids == cua_ids == set(extra) and len(cua_ids) > 40
    assert 'bid="' in pruned and "<article" in pruned
    cards = _cards(dom_txt)
    assert len(cards) == 8, dom_txt[:2000]
    # a bid read off the DOM acts on that element: the first card's add-to-cart
    obs, _, _, _, _ = env.step(f'click("{cards[0][2]}")')
    assert obs["last_action_error"] == ""
    assert "Cart, 2 items" in flatten_axtree_to_str(obs["axtree_object"])
    env.reset(seed=0)


@pytest.mark.slow
def test_browsergym_tree_nests_as_the_page(shop_home: tuple[Any, dict[str, Any]]) -> None:
    """The accessibility tree as BrowserGym's `flatten_axtree_to_str` prints it: nested as the
    page, in document order, the top bar first, each product card holding its own name, price
    and button, as the DOM has them."""
    from browsergym.utils.obs import flatten_axtree_to_str

    env, obs = shop_home
    tree = obs["axtree_object"]
    ax_txt = flatten_axtree_to_str(tree, extra_properties=obs["extra_element_properties"], with_visible=True,
                                   with_clickable=True, with_center_coords=True, with_som=True)
    nodes = tree["nodes"]
    root = nodes[0]
    assert root["role"]["value"] == "RootWebArea" and len(root["childIds"]) < 5
    lines = ax_txt.splitlines()

    def first(text: str) -> int:
        return next(i for i, line in enumerate(lines) if text in line)

    assert first("banner ''") < first("link 'Home'") < first("article ''") < first("$"), ax_txt
    from_tree = []
    for article in (n for n in nodes if n["role"]["value"] == "article"):
        inside = _subtree(tree, article)
        name = next(n["name"]["value"] for n in inside if n["role"]["value"] == "link")
        (price,) = [n["name"]["value"] for n in inside if n["name"]["value"].startswith("$")]
        (button,) = [n["browsergym_id"] for n in inside if n["role"]["value"] == "button"]
        from_tree.append((name, price, button))
    cards = _cards(_dom_txt(obs))
    assert from_tree == cards and len(cards) == 8
    # the printed tree indents a card's price under its card
    assert lines[first(cards[0][1])].count("\t") > lines[first("article ''")].count("\t")
    # cua's own compact tree (what its policies and the Inspect tool read) is in document order too
    compact = [(n["role"], n["name"]) for n in env.unwrapped_cua.episode.observation.axtree]
    assert compact.index(("link", "Home")) < compact.index(("article", ""))
    marks = [name[:1] for role, name in compact if role == "article" or name.startswith("$")]
    assert marks == ["", "$"] * 8  # each card, then its price


@pytest.mark.slow
def test_a_served_sandbox_gives_browsergym_the_same_page(shop_home: tuple[Any, dict[str, Any]]) -> None:
    """Over cua's websocket protocol the DOM and the tree arrive as in process."""
    from browsergym.utils.obs import flatten_axtree_to_str

    from cua.compat.browsergym import BrowserGymEnv
    from cua.server.app import serve_in_thread

    _, local = shop_home
    with serve_in_thread() as server:
        env = BrowserGymEnv("shop.infeasible_coupon@1", server=server.url, token=server.token)
        try:
            remote, _ = env.reset(seed=0)
        finally:
            env.close()
    assert flatten_axtree_to_str(remote["axtree_object"]) == flatten_axtree_to_str(local["axtree_object"])
    assert _cards(_dom_txt(remote)) == _cards(_dom_txt(local))


def test_browsergym_wraps_browser_tasks_only() -> None:
    from cua.compat.browsergym import BrowserGymEnv
    from cua.errors import Unsupported

    with pytest.raises(Unsupported, match="desktop sandbox"):
        BrowserGymEnv("desktop.count_csv_lines@1")


def test_a_page_cannot_pass_its_own_bid_off_as_an_element_id() -> None:
    """BrowserGym's marking overwrites a `bid` the page set; cua drops it, so only the
    elements cua gave an id carry one (a page's `bid="e1"` on a decoy is gone)."""
    from cua.compat.browsergym import to_dom_object

    # html > body > [a decoy <div bid="e1">, a <button>] : the button (backend 13) is cua's e1
    strings = ["HTML", "BODY", "DIV", "bid", "e1", "class", "decoy", "BUTTON"]
    snap: dict[str, Any] = {"strings": list(strings), "documents": [{"nodes": {
        "parentIndex": [-1, 0, 1, 1], "nodeType": [1, 1, 1, 1], "nodeName": [0, 1, 2, 7],
        "nodeValue": [-1, -1, -1, -1], "backendNodeId": [10, 11, 12, 13],
        "attributes": [[], [], [3, 4, 5, 6], []], "contentDocumentIndex": {"index": [], "value": []}}}]}
    dom = to_dom_object({"dom_snapshot": snap, "element_ids": {"13": "e1"}, "axtree_nodes": []})
    attrs = [[dom["strings"][i] for i in a] for a in dom["documents"][0]["nodes"]["attributes"]]
    assert attrs == [[], [], ["class", "decoy"], ["bid", "e1"]]
    assert snap["strings"] == strings and snap["documents"][0]["nodes"]["attributes"][2] == [3, 4, 5, 6]  # a copy
