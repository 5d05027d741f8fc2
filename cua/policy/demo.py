"""A demonstration in a policy's context: a recorded episode of a similar task, shown before the task.

`cua eval --demo` hands a policy a `Demo` through `PolicyOptions.demo`: the demo's instruction,
its actions in order (unified actions in the pixels of the frame they were taken on) and a few
of its frames, downscaled (first, middle, last). A model policy puts it into its prompt as a
prefix (`demo_messages`, used by `cua.policy.engine.build_prompt` for the OpenAI-compatible and
transformers backends alike); a scripted policy sees the same object in its options and may
replay it (`scripted:@demo`).

The demo is plain data, so it travels to a policy server in the options like any other field,
and it never names the task the agent is given: the eval side (`cua.eval.demo`) chooses it
and refuses one of the same instance.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cua.actions import parse_action
from cua.observation import Size
from cua.policy.families.base import Family, Message, PreparedImage, UnrenderableAction

__all__ = ["Demo", "DemoFrame", "DemoStep", "demo_messages"]


class DemoFrame(BaseModel):
    """One screenshot of the demo, downscaled: the observation before step `step` (the last
    one: after the demo's last step, `step` = its step count)."""

    model_config = ConfigDict(extra="forbid")
    step: int = Field(ge=0)
    format: Literal["jpeg", "png"] = "jpeg"
    #: The image bytes, base64 (so the demo stays JSON on the policy wire).
    data: str
    size: Size

    def image(self) -> PreparedImage:
        return PreparedImage(size=self.size, data=base64.b64decode(self.data), format=self.format)


class DemoStep(BaseModel):
    """One step of the demo: its unified action (JSON), in the pixels of `frame`."""

    model_config = ConfigDict(extra="forbid")
    action: dict[str, Any]
    frame: Size


class Demo(BaseModel):
    """A recorded episode of a similar task, for a policy's context."""

    model_config = ConfigDict(extra="forbid")
    instruction: str
    steps: list[DemoStep] = Field(default_factory=list)
    frames: list[DemoFrame] = Field(default_factory=list, max_length=8)
    #: Where it came from (a trajectory folder, its task and seed), for the record; never shown to the model.
    source: dict[str, Any] = Field(default_factory=dict)


#: The text that opens and closes a demo in a prompt.
DEMO_INTRO = "Here is a demonstration of a similar task, solved step by step. Its instruction was:"
DEMO_OUTRO = "End of the demonstration. Now solve your own task, which may differ in its details."


def _action_text(family: Family, step: DemoStep) -> str:
    """The step as the family's model would write it (its own coordinates); JSON where the
    family has no renderer or cannot express the action."""
    try:
        return family.render([parse_action(step.action)], step.frame, approximate=True)
    except (UnrenderableAction, ValueError):
        return json.dumps(step.action, ensure_ascii=False, separators=(",", ":"))


def demo_messages(family: Family, demo: Demo) -> list[Message]:
    """The demo as one user message (instruction, numbered actions, frames each labelled by the
    step it came before) and a short assistant acknowledgement, so that the conversation that
    follows keeps its user/assistant alternation."""
    content: list[dict[str, Any]] = [{"type": "text", "text": f"{DEMO_INTRO}\n{demo.instruction}"}]
    frames = {frame.step: frame for frame in demo.frames}
    for index, step in enumerate(demo.steps):
        if index in frames:
            content += [{"type": "text", "text": f"Screen before step {index + 1}:"},
                        {"type": "image", "image": frames[index].image()}]
        content.append({"type": "text", "text": f"Step {index + 1}: {_action_text(family, step)}"})
    last = frames.get(len(demo.steps))
    if last is not None:
        content += [{"type": "text", "text": "Screen after the last step:"}, {"type": "image", "image": last.image()}]
    content.append({"type": "text", "text": DEMO_OUTRO})
    return [{"role": "user", "content": content},
            {"role": "assistant", "content": [{"type": "text", "text": "Understood."}]}]
