"""TRL: a `GRPOTrainer(rollout_func=...)` whose completions are whole cua episodes.

    from cua.rl.adapters.trl import CuaRolloutFunc, cua_reward, task_dataset
    rollouts = CuaRolloutFunc("http://127.0.0.1:8300", policy={"base_url": VLLM + "/v1", "model": NAME},
                              token=TOKEN)  # the service's (default: $CUA_ROLLOUT_TOKEN)
    trainer = GRPOTrainer(model=NAME, reward_funcs=[cua_reward], rollout_func=rollouts,
                          train_dataset=task_dataset(["todo.mark_done@1"], seeds=range(64)), args=config)

Each prompt of the dataset names a task and a seed. For a slice of prompts the function
asks the rollout service (`cua rollout serve`) for one group of `trainer.num_generations`
rollouts per prompt, all forked from one state, run against the policy endpoint (the
trainer's vLLM, serving the weights being trained), tagged with the trainer's step as
the policy version (the service refuses work too far behind it).

A multi-turn episode becomes one sequence: the first turn's prompt ids, then every turn's
completion ids with, between them, the tokens the environment added to the context (the
next screenshot and text), which `env_mask` marks 0 so only the model's tokens are
trained. A masked rollout (its group lost a rollout to the infrastructure) has an
all-zero `env_mask` and a reward of None: it moves no weight and is never scored 0.
The turns of an episode must extend one another's context (the prompt of a turn starts
with the previous prompt and completion): keep enough `history_images` for the episode.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

import httpx

__all__ = ["CuaRolloutFunc", "cua_reward", "flatten_turns", "task_dataset", "task_prompt"]

_TAG = re.compile(r"\[cua task=(?P<task>\S+) seed=(?P<seed>-?\d+)\]")


def task_prompt(task: str, seed: int) -> list[dict[str, str]]:
    """The dataset prompt that stands for one task instance (its instruction follows the tag)."""
    from cua.tasks.registry import get_template

    instruction = get_template(task).instantiate(seed).instruction
    return [{"role": "user", "content": f"[cua task={task} seed={seed}] {instruction}"}]


def task_dataset(tasks: Sequence[str], seeds: Iterable[int]) -> Any:
    """A `datasets.Dataset` with one `prompt` per (task, seed)."""
    from datasets import Dataset

    seeds = list(seeds)
    return Dataset.from_dict({"prompt": [task_prompt(t, s) for t in tasks for s in seeds]})


def _task_of(prompt: Any) -> tuple[str, int]:
    text = prompt if isinstance(prompt, str) else " ".join(
        str(m.get("content")) for m in prompt if isinstance(m, dict))
    match = _TAG.search(text)
    if match is None:
        raise ValueError(f"not a cua task prompt (make it with task_prompt / task_dataset): {text[:120]!r}")
    return match["task"], int(match["seed"])


def flatten_turns(steps: Sequence[dict[str, Any]]) -> tuple[list[int], list[int], list[float], list[int]]:
    """(prompt ids, completion ids, logprobs, env mask) of an episode's turns as one sequence."""
    turns = [s["tokens"] for s in steps if s.get("tokens") and s["tokens"].get("completion_ids") is not None]
    if not turns:
        return [], [], [], []
    if any(t.get("prompt_ids") is None or t.get("logprobs") is None for t in turns):
        raise ValueError("the policy endpoint reported no prompt token ids or logprobs (vLLM: return_token_ids)")
    prompt = list(turns[0]["prompt_ids"])
    context = list(prompt)
    completion: list[int] = []
    logprobs: list[float] = []
    mask: list[int] = []
    for index, turn in enumerate(turns):
        if index:
            ids = turn["prompt_ids"]
            if ids[:len(context)] != context:
                raise ValueError(f"turn {index}'s prompt does not extend the previous context (screenshots dropped "
                                 "from the history?): raise history_images, or train turn by turn")
            added = ids[len(context):]
            completion += added
            logprobs += [0.0] * len(added)
            mask += [0] * len(added)
            context = list(ids)
        completion += turn["completion_ids"]
        logprobs += list(turn["logprobs"])
        mask += [1] * len(turn["completion_ids"])
        context += turn["completion_ids"]
    return prompt, completion, logprobs, mask


class CuaRolloutFunc:
    """A `rollout_func` for TRL's GRPOTrainer, backed by the rollout service."""

    def __init__(self, service_url: str, *, policy: dict[str, Any], max_steps: int | None = None,
                 isolation: str | None = None, timeout: float = 3600.0, token: str | None = None) -> None:
        self.service_url = service_url.rstrip("/")
        #: The rollout service's token (`cua rollout serve` prints it); None: $CUA_ROLLOUT_TOKEN.
        self.token = token or os.environ.get("CUA_ROLLOUT_TOKEN")
        self.policy = dict(policy)
        self.max_steps = max_steps
        self.isolation = isolation
        self.timeout = timeout
        #: The last response of the service (trajectory folders, timings).
        self.last: dict[str, Any] | None = None

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        group_size = int(getattr(trainer, "num_generations", 1) or 1)
        version = int(getattr(getattr(trainer, "state", None), "global_step", 0) or 0)
        out: dict[str, list[Any]] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask",
                                                      "env_reward", "mask_sample", "trajectory")}
        wanted = [_task_of(p) for p in prompts]
        by_task: dict[str, list[int]] = {}
        for task, seed in wanted:
            by_task.setdefault(task, []).append(seed)
        groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        with httpx.Client(timeout=self.timeout, headers=headers) as http:
            for task, seeds in by_task.items():
                body = {"policy": self.policy, "tasks": [task], "seeds": sorted(set(seeds)), "group_size": group_size,
                        "policy_version": version, "max_steps": self.max_steps, "isolation": self.isolation,
                        "frames": "none"}
                self.last = _post_rollouts_keyed(http, f"{self.service_url}/rollouts", body)
                for group in self.last["groups"]:
                    groups[(group["task_id"], group["seed"])] = group["trajectories"]
        for task, seed in wanted:
            for traj in groups[(task, seed)]:
                masked = bool(traj["mask_sample"])
                prompt, completion, logprobs, mask = flatten_turns(traj["steps"]) if not masked else ([], [], [], [])
                if masked or not completion:  # nothing the model said can be trained on
                    prompt = prompt or [0]
                    completion, logprobs, mask = completion or [0], logprobs or [0.0], [0] * max(1, len(completion))
                out["prompt_ids"].append(prompt)
                out["completion_ids"].append(completion)
                out["logprobs"].append(logprobs)
                out["env_mask"].append(mask)
                out["env_reward"].append(None if masked else traj["reward"])
                out["mask_sample"].append(masked)
                out["trajectory"].append(traj["folder"])
        return out


def _post_rollouts_keyed(http: httpx.Client, url: str, body: dict[str, Any], *, tries: int = 4) -> dict[str, Any]:
    """`POST /rollouts` with one `Idempotency-Key` over its retries: a connection that breaks,
    or a full service (503), is asked again and joins (or replays) the same request, so the
    group never runs twice (`cua.rollout.ledger`)."""
    key = f"trl-{uuid.uuid4().hex}"
    for attempt in range(tries):
        try:
            response = http.post(url, json=body, headers={"Idempotency-Key": key})
        except httpx.TransportError:
            if attempt == tries - 1:
                raise
            time.sleep(2.0 * (attempt + 1))  # the service is away (no event to await): back off, same key
            continue
        if response.status_code == 503 and attempt < tries - 1:
            # full (a retryable `capacity` refusal): nothing to wait on but time, so back off
            time.sleep(2.0 * (attempt + 1))
            continue
        if response.status_code != 200:
            raise RuntimeError(f"the rollout service answered {response.status_code}: {response.text[:500]}")
        answer: dict[str, Any] = response.json()
        return answer
    raise AssertionError("unreachable")


def cua_reward(prompts: Any = None, completions: Any = None, env_reward: list[float | None] | None = None,
               **_: Any) -> list[float | None]:
    """The judge's score of each rollout's final state (None for a masked one)."""
    if env_reward is None:
        raise ValueError("cua_reward needs the env_reward column of CuaRolloutFunc")
    return list(env_reward)
