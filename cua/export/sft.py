"""Supervised fine-tuning rows in each model family's own format.

Each turn of a trajectory becomes one sample: the prompt the policy server would send
the family's model at that observation (built by `cua.policy.engine.build_prompt`, the
same code `ModelPolicy.act` uses: the same system text, the screenshot resized to the
model's frame, the last N screenshots, the text state), then the assistant turn: the
turn's actions rendered in the family's text and coordinate frame
(`Family.render`), with the step's thought. Earlier assistant turns in the history are
rendered the same way, so a sample reads as if the model had produced the whole
trajectory.

Loss masks: only assistant turns carry loss, and by default only the last one (the
earlier ones are context and are trained by their own samples); ``loss="all"`` marks
every assistant turn. Layouts:

- Qwen-style (qwen2.5-vl, qwen3-vl, ui-tars-1.5): ``{"image": [...], "system": ...,
  "conversations": [{"from": "human", "value": "<image>..."}, {"from": "gpt", "value":
  ..., "loss": true}]}`` (the Qwen-VL / LLaMA-Factory ShareGPT layout);
- openai: the chat fine-tuning layout, ``{"messages": [...]}`` with ``image_url`` parts
  and ``weight`` 0/1 on assistant messages;
- anthropic: ``{"system": ..., "messages": [...]}`` with ``image`` blocks (base64 when
  embedded) and ``loss`` on assistant messages.

A turn the family cannot express (`UnrenderableAction`: e.g. a right double-click for
Qwen2.5-VL) is skipped and counted, and it is left out of later samples' history too.
By default rendering approximates where the family's format must (each row lists its
`approximations`); ``approximate=False`` skips those turns instead.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cua.actions import Action, parse_action
from cua.export.rows import ImageMode
from cua.observation import Observation, Screenshot
from cua.policy.engine import DEFAULT_HISTORY_IMAGES, build_prompt, remember_turn
from cua.policy.families import Family, PreparedImage, Turn, get_family
from cua.policy.families.base import Message, RenderContext, UnrenderableAction
from cua.trajectory import StepLine, Trajectory

__all__ = ["SFT_FAMILIES", "LossMode", "SftSample", "SftStats", "observation_of", "sft_rows", "sft_samples", "turns_of"]

SFT_FAMILIES = ("qwen2.5-vl", "qwen3-vl", "ui-tars-1.5", "openai", "anthropic",
                "qwen2.5-vl-mobile", "qwen3-vl-mobile", "ui-tars-1.5-mobile", "androidworld")
LossMode = Literal["last", "all"]
_QWEN_LAYOUT = {"qwen2.5-vl", "qwen3-vl", "ui-tars-1.5", "qwen2.5-vl-mobile", "qwen3-vl-mobile", "ui-tars-1.5-mobile",
                "androidworld"}


@dataclass
class SftStats:
    samples: int = 0
    approximated: int = 0
    #: why -> how many turns were skipped for it
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1


def turns_of(steps: list[StepLine]) -> list[list[StepLine]]:
    """Consecutive steps of one policy turn, grouped (a turn may yield several actions)."""
    groups: list[list[StepLine]] = []
    for line in steps:
        if groups and groups[-1][0].turn == line.turn:
            groups[-1].append(line)
        else:
            groups.append([line])
    return groups


def observation_of(traj: Trajectory, line: StepLine, previous: StepLine | None) -> Observation:
    """The observation step `line` acted on, rebuilt from the stored frame and text state
    (the previous action's error is part of it: the policy saw it in the text state)."""
    ref = line.observation
    data = traj.frame_bytes(ref)
    shot = None if data is None else Screenshot(format="jpeg", width=ref.size.width, height=ref.size.height, data=data)
    return Observation(sandbox_id=traj.meta.id if traj.meta else "export", frame=ref.size, screen=ref.screen or ref.size,
                       screenshot=shot, url=ref.url, title=ref.title, axtree=traj.axtree(ref), focused=ref.focused,
                       error=previous.error if previous is not None else None, step=ref.sandbox_step)


class _Images:
    """Writes each prepared screenshot once and names it in rows (path or data URL)."""

    def __init__(self, out: Path, mode: ImageMode) -> None:
        self.out, self.mode = out, mode
        self._names: dict[int, str] = {}

    def add(self, image: PreparedImage | None, name: str) -> None:
        if image is None or image.dropped:
            return
        if self.mode == "path":
            path = self.out / "images" / f"{name}.{'jpg' if image.format == 'jpeg' else image.format}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(image.data)
            self._names[id(image)] = path.relative_to(self.out).as_posix()
        else:
            self._names[id(image)] = name

    def ref(self, image: PreparedImage) -> str:
        if self.mode == "path":
            return self._names[id(image)]
        return f"data:image/{image.format};base64,{base64.b64encode(image.data).decode('ascii')}"

    def media(self, image: PreparedImage) -> tuple[str, str]:
        return f"image/{image.format}", base64.b64encode(image.data).decode("ascii")


@dataclass
class SftSample:
    """One turn as a model would have seen and answered it (neutral messages: the
    family's layout is applied by `sft_rows`)."""

    turn: int
    step: int
    #: The prompt `build_prompt` made, then the assistant message with `text`.
    messages: list[Message]
    text: str
    approximations: list[str]
    tools: list[dict[str, Any]] | None


def sft_samples(traj: Trajectory, family: Family, *, history_images: int = DEFAULT_HISTORY_IMAGES,
                approximate: bool = True, stats: SftStats | None = None,
                on_image: Any = None) -> Iterator[SftSample]:
    """The renderable turns of `traj`'s final attempt as prompts and answers, the history
    carried from turn to turn exactly as `ModelPolicy` carries a session's."""
    stats = stats if stats is not None else SftStats()
    meta = traj.meta
    assert meta is not None
    history: list[Turn] = []
    previous: StepLine | None = None
    for group in turns_of(traj.steps):
        first = group[0]
        obs = observation_of(traj, first, previous)
        previous = group[-1]
        if any(s.action is None for s in group):
            stats.skip("a step whose output did not parse")
            continue
        actions: list[Action] = [parse_action(s.action) for s in group]
        ctx = RenderContext(family.model_frame(obs.frame), approximate)
        try:
            text = family.render_turn(actions, first.thought, ctx)
        except UnrenderableAction as exc:
            stats.skip(str(exc))
            continue
        prompt = build_prompt(family, meta.instruction, history, obs, history_images)
        if on_image is not None:
            on_image(prompt.image, first)
        messages = [*prompt.messages, {"role": "assistant", "content": [{"type": "text", "text": text}]}]
        remember_turn(history, prompt, text, history_images)
        stats.samples += 1
        if ctx.approximations:
            stats.approximated += 1
        yield SftSample(turn=first.turn, step=first.index, messages=messages, text=text,
                        approximations=ctx.approximations, tools=prompt.tools)


def sft_rows(traj: Trajectory, family: Family | str, out: Path, *, images: ImageMode = "path",
             history_images: int = DEFAULT_HISTORY_IMAGES, loss: LossMode = "last", approximate: bool = True,
             stats: SftStats | None = None) -> Iterator[dict[str, Any]]:
    """One SFT row per renderable turn of `traj`'s final attempt, in `family`'s layout."""
    fam = get_family(family) if isinstance(family, str) else family
    meta = traj.meta
    assert meta is not None
    store = _Images(out, images)

    def keep(image: PreparedImage | None, line: StepLine) -> None:
        frame = line.observation.frame
        store.add(image, f"{meta.id}/{frame.rsplit('/', 1)[-1].rsplit('.', 1)[0]}" if frame else f"{meta.id}/t{line.turn}")

    passed = traj.end.verdict.passed if traj.end is not None and traj.end.verdict is not None else None
    for sample in sft_samples(traj, fam, history_images=history_images, approximate=approximate, stats=stats,
                              on_image=keep):
        row = {
            "id": f"{meta.id}-{sample.turn}",
            "trajectory_id": meta.id,
            "task_id": meta.task_id,
            "seed": meta.seed,
            "turn": sample.turn,
            "step": sample.step,
            "family": fam.name,
            "passed": passed,
            "approximations": sample.approximations,
            **_layout(fam.name, sample.messages, store, loss),
        }
        if sample.tools:
            row["tools"] = sample.tools
        yield row


def _loss_flags(messages: list[Message], loss: LossMode) -> list[bool]:
    last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    return [m["role"] == "assistant" and (loss == "all" or i == last) for i, m in enumerate(messages)]


def _text(content: list[dict[str, Any]]) -> str:
    return "\n".join(p["text"] for p in content if p["type"] == "text")


def _layout(name: str, messages: list[Message], store: _Images, loss: LossMode) -> dict[str, Any]:
    flags = _loss_flags(messages, loss)
    if name in _QWEN_LAYOUT:
        image_refs: list[str] = []
        system: str | None = None
        conversations: list[dict[str, Any]] = []
        for message, flag in zip(messages, flags, strict=True):
            if message["role"] == "system":
                system = _text(message["content"])
                continue
            parts = []
            for part in message["content"]:
                if part["type"] == "image":
                    image_refs.append(store.ref(part["image"]))
                    parts.append("<image>")
                else:
                    parts.append(part["text"])
            turn: dict[str, Any] = {"from": "human" if message["role"] == "user" else "gpt", "value": "\n".join(parts)}
            if message["role"] == "assistant":
                turn["loss"] = flag
            conversations.append(turn)
        return {"image": image_refs, "system": system, "conversations": conversations}
    if name == "openai":
        out: list[dict[str, Any]] = []
        for message, flag in zip(messages, flags, strict=True):
            if message["role"] in ("system", "assistant"):
                item: dict[str, Any] = {"role": message["role"], "content": _text(message["content"])}
                if message["role"] == "assistant":
                    item["weight"] = int(flag)
                out.append(item)
                continue
            content = [{"type": "image_url", "image_url": {"url": store.ref(p["image"])}} if p["type"] == "image"
                       else {"type": "text", "text": p["text"]} for p in message["content"]]
            out.append({"role": "user", "content": content})
        return {"messages": out}
    system_text: str | None = None
    blocks: list[dict[str, Any]] = []
    for message, flag in zip(messages, flags, strict=True):
        if message["role"] == "system":
            system_text = _text(message["content"])
            continue
        content = []
        for part in message["content"]:
            if part["type"] == "image":
                if store.mode == "path":
                    content.append({"type": "image", "source": {"type": "path", "path": store.ref(part["image"])}})
                else:
                    media, data = store.media(part["image"])
                    content.append({"type": "image", "source": {"type": "base64", "media_type": media, "data": data}})
            else:
                content.append({"type": "text", "text": part["text"]})
        item = {"role": message["role"], "content": content}
        if message["role"] == "assistant":
            item["loss"] = flag
        blocks.append(item)
    return {"system": system_text, "messages": blocks}
