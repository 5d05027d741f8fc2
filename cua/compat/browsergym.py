"""Any cua browser task as a BrowserGym environment, for agents written to BrowserGym's
interface (AgentLab's among them): the same observation keys and the same high-level
action strings, over cua's sandboxes, judges, snapshots and trajectories.

    env = BrowserGymEnv("miniwob.click_button@1")
    obs, info = env.reset(seed=3)
    obs, reward, terminated, truncated, info = env.step('click("e12")')

Observation keys as BrowserGym gives them: `chat_messages`, `goal`, `goal_object`,
`open_pages_urls`, `open_pages_titles`, `active_page_index`, `url`, `screenshot` (uint8
H x W x 3), `dom_object`, `axtree_object`, `extra_element_properties` ({bid: visibility,
bbox, clickable, set_of_marks}), `focused_element_bid`, `last_action`, `last_action_error`,
`elapsed_time`. `dom_object` and `axtree_object` are what BrowserGym reads from Chromium
itself: the page's `DOMSnapshot.captureSnapshot` and its `Accessibility.getFullAXTree`, from
the sandbox's own reads (`ObserveOptions.cdp`), nested as the page nests. Every interactive
element carries its cua element id as its `bid` (a `bid` attribute in the DOM, a
`browsergym_id` in the tree), so BrowserGym's `flatten_dom_to_str`, `prune_html` and
`flatten_axtree_to_str` read them as they read BrowserGym's. Unlike BrowserGym, cua marks
only the elements an agent can act on, and never writes into the page.

Actions are BrowserGym's strings, parsed by `cua.compat.browsergym_actions` (with `ast`,
never executed). A string that does not parse, or names an element that is not there,
becomes `last_action_error` and the episode goes on, as in BrowserGym. One string may
expand into several cua actions (`fill` clicks, selects all, types): they are performed in
order, their rewards summed, and the episode's trajectory keeps each of them.

Everything else is `cua.rl.CuaEnv`'s: the episode (reset seed, setup steps, the instruction
read after reset), the judge's reward, termination, `trajectory_dir`, `server`.
"""

from __future__ import annotations

import json
import time
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from cua.actions import Action, Done
from cua.compat.browsergym_actions import BrowserGymActionError, parse_browsergym_action
from cua.errors import Unsupported
from cua.observation import ObserveOptions
from cua.rl.env import CuaEnv
from cua.task import TaskTemplate

__all__ = ["BrowserGymEnv", "to_axtree_object", "to_dom_object"]

_WELCOME = "Hi! I am your UI assistant, I can perform web tasks for you. What can I help you with?"


#: BrowserGym's attribute for an element's id in the DOM (`browsergym.core.constants.BROWSERGYM_ID_ATTRIBUTE`).
BID_ATTRIBUTE = "bid"


def _copy(data: Any) -> Any:
    """A deep copy of CDP's JSON answers (a JSON round trip is four times faster than
    `copy.deepcopy` on them): an agent that edits its observation never edits the sandbox's
    reads, which it keeps for the next unchanged step."""
    return json.loads(json.dumps(data))


def to_axtree_object(cdp: dict[str, Any]) -> dict[str, Any]:
    """BrowserGym's `axtree_object` from an observation's CDP answers (`Observation.cdp`):
    Chromium's `Accessibility.getFullAXTree` nodes, as BrowserGym reads them, nested by their
    `childIds` as the page nests, root first; each node with a cua element id carries it as
    its `browsergym_id`. Inline text boxes are left out, as BrowserGym's tree has none (each
    repeats its static text; cua's Chromium computes them for its own element boxes).
    Copies: the observation's own nodes are never changed."""
    ids: dict[str, str] = cdp["element_ids"]
    boxes = {n["nodeId"] for n in cdp["axtree_nodes"] if (n.get("role") or {}).get("value") == "InlineTextBox"}
    nodes = _copy([n for n in cdp["axtree_nodes"] if n["nodeId"] not in boxes])
    for node in nodes:
        if boxes and "childIds" in node:
            node["childIds"] = [c for c in node["childIds"] if c not in boxes]
        eid = ids.get(str(node.get("backendDOMNodeId")))
        if eid is not None:
            node["browsergym_id"] = eid
    return {"nodes": nodes}


def to_dom_object(cdp: dict[str, Any]) -> dict[str, Any]:
    """BrowserGym's `dom_object` from an observation's CDP answers: the page's
    `DOMSnapshot.captureSnapshot` (with DOM rects and paint order, as BrowserGym's
    `extract_dom_snapshot` takes it), each element with a cua element id carrying it as its
    `bid` attribute, as BrowserGym marks elements. A `bid` the page set itself is dropped, as
    BrowserGym's marking overwrites it: no element can pass for another. A copy."""
    ids: dict[str, str] = cdp["element_ids"]
    snap: dict[str, Any] = _copy(cdp["dom_snapshot"])
    strings: list[str] = snap["strings"]
    index: dict[str, int] = {}

    def string_id(text: str) -> int:
        if text not in index:
            index[text] = len(strings)
            strings.append(text)
        return index[text]

    page_bid = {i for i, text in enumerate(strings) if text == BID_ATTRIBUTE}
    for document in snap["documents"]:
        nodes = document["nodes"]
        for i, (backend, attrs) in enumerate(zip(nodes["backendNodeId"], nodes["attributes"], strict=True)):
            if page_bid and any(name in page_bid for name in attrs[0::2]):
                attrs = [v for pair in zip(attrs[0::2], attrs[1::2], strict=True) if pair[0] not in page_bid
                         for v in pair]
            eid = ids.get(str(backend))
            if eid is not None:
                attrs = [*attrs, string_id(BID_ATTRIBUTE), string_id(eid)]
            nodes["attributes"][i] = attrs
    return snap


class _AnyDict(spaces.Space[dict[str, Any]]):
    def contains(self, x: Any) -> bool:
        return isinstance(x, dict)


class BrowserGymEnv(gym.Env[dict[str, Any], str]):
    """See the module docstring."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, task: str | TaskTemplate, **cua_env: Any) -> None:
        observe = cua_env.pop("observe", None) or ObserveOptions()
        self.env = CuaEnv(task, observe=observe.model_copy(update={"element_ids": True, "cdp": True}), **cua_env)
        kind = self.env.template.instantiate(0).sandbox_kind
        if kind != "browser":
            self.env.close()
            raise Unsupported(f"BrowserGym environments wrap browser tasks; {self.env.template.id} runs in a "
                              f"{kind} sandbox (use cua.rl.CuaEnv for it)")
        frame = self.env.frame
        text = spaces.Text(max_length=1_000_000)
        self.observation_space = spaces.Dict({
            "chat_messages": spaces.Sequence(_AnyDict()), "goal": text, "goal_object": spaces.Sequence(_AnyDict()),
            "open_pages_urls": spaces.Sequence(text), "open_pages_titles": spaces.Sequence(text),
            "active_page_index": spaces.Box(0, 255, (1,), np.int64), "url": text,
            "screenshot": spaces.Box(0, 255, (frame.height, frame.width, 3), np.uint8),
            "dom_object": _AnyDict(), "axtree_object": _AnyDict(), "extra_element_properties": _AnyDict(),
            "focused_element_bid": text, "last_action": text, "last_action_error": text,
            "elapsed_time": spaces.Box(0, np.inf, (1,), np.float64)})
        self.action_space = spaces.Text(max_length=100_000)
        self._elements: dict[str, dict[str, Any]] = {}
        self._chat: list[dict[str, Any]] = []
        self._started = 0.0
        self._ended = False
        self._last_info: dict[str, Any] = {}
        self._last_screenshot: np.ndarray | None = None

    @property
    def unwrapped_cua(self) -> CuaEnv:
        """The cua env underneath (its episode, trajectory, snapshots)."""
        return self.env

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        frame, info = self.env.reset(seed=seed, options=options)
        self._started = time.time()
        self._ended = False
        goal = str(info["instruction"])
        self._chat = [{"role": "assistant", "timestamp": self._started, "message": _WELCOME},
                      {"role": "user", "timestamp": self._started, "message": goal}]
        return self._obs(frame["screenshot"], info, "", ""), {**info, "task_info": {"task_id": info["task_id"]}}

    def step(self, action: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self._ended:
            raise gym.error.ResetNeeded("the episode ended: call reset()")
        ep = self.env.episode
        assert ep is not None, "call reset() first"
        try:
            actions: list[Action] = parse_browsergym_action(action, elements=self._elements,
                                                            viewport=(self.env.frame.width, self.env.frame.height))
        except BrowserGymActionError as exc:
            actions, parse_error = [], str(exc)
        else:
            parse_error = ""
        reward, terminated, truncated = 0.0, False, False
        info: dict[str, Any] = {}
        screenshot: np.ndarray | None = None
        error = parse_error
        for act in actions:
            frame, r, terminated, truncated, info = self.env.step(act)
            reward += float(r)
            screenshot = frame["screenshot"]
            if info.get("action_error"):
                error = str(info["action_error"].get("message", ""))
                break
            if terminated or truncated:
                break
        if actions and isinstance(actions[-1], Done):
            self._chat.append({"role": "assistant", "timestamp": time.time(), "message": actions[-1].answer or ""})
        if not actions:
            info = self._last_info
        self._ended = terminated or truncated
        shot = screenshot if screenshot is not None else self._last_screenshot
        return self._obs(shot, info, action, error), reward, terminated, truncated, info

    def render(self) -> np.ndarray | None:
        return self._last_screenshot

    def close(self) -> None:
        self.env.close()

    def _obs(self, screenshot: np.ndarray | None, info: dict[str, Any], last_action: str,
             last_error: str) -> dict[str, Any]:
        ep = self.env.episode
        assert ep is not None
        obs = ep.observation
        self._last_info, self._last_screenshot = info, screenshot
        if obs.cdp is None:
            raise Unsupported(f"the {self.env.template.id} sandbox gave no CDP structures (ObserveOptions.cdp): "
                              "BrowserGym's dom_object and axtree_object are made from them")
        nodes = obs.axtree or []
        self._elements = {n["id"]: n for n in nodes if n.get("id")}
        extra = {bid: {"visibility": 1.0 if "bbox" in n else 0.0,
                       "bbox": [n["bbox"]["x"], n["bbox"]["y"], n["bbox"]["width"], n["bbox"]["height"]]
                       if "bbox" in n else None,
                       "clickable": True, "set_of_marks": "bbox" in n}
                 for bid, n in self._elements.items()}
        focused = next((bid for bid, n in self._elements.items() if "focused" in n.get("states", ())), "")
        goal = ep.instruction
        return {
            "chat_messages": list(self._chat), "goal": goal, "goal_object": [{"type": "text", "text": goal}],
            "open_pages_urls": [obs.url or ""], "open_pages_titles": [obs.title or ""],
            "active_page_index": np.array([0]), "url": obs.url or "",
            "screenshot": screenshot if screenshot is not None else np.zeros(
                (self.env.frame.height, self.env.frame.width, 3), np.uint8),
            "dom_object": to_dom_object(obs.cdp), "axtree_object": to_axtree_object(obs.cdp),
            "extra_element_properties": extra, "focused_element_bid": focused,
            "last_action": last_action, "last_action_error": last_error,
            "elapsed_time": np.array([time.time() - self._started]),
        }
