"""A sandbox kind with a screen and nothing else (no queries, no snapshots, no stream),
registered as `test-blank` on import: what a handle, a server and an episode do with a
kind that lacks the optional abilities (tests/episode/test_handle_conformance.py and the
`reset_query`/`act_query` tests)."""

from __future__ import annotations

import io
from typing import Any

from PIL import Image
from pydantic import BaseModel

from cua.actions import Action
from cua.info import SandboxInfo
from cua.observation import Observation, ObserveOptions, Screenshot, Size
from cua.sandbox import EventSink, Sandbox, register_kind, scale_action


class BlankConfig(BaseModel):
    width: int = 320
    height: int = 200


@register_kind
class BlankSandbox(Sandbox):
    """A screen and nothing else: no queries, no snapshots, no stream."""

    kind = "test-blank"
    config_model = BlankConfig

    def __init__(self, config: BlankConfig, sandbox_id: str) -> None:
        self.id = sandbox_id
        self.screen = Size(width=config.width, height=config.height)
        self.steps = 0
        self.closed = False

    @classmethod
    async def create(cls, config: BaseModel, *, sandbox_id: str, emit: EventSink | None = None) -> BlankSandbox:
        assert isinstance(config, BlankConfig)
        return cls(config, sandbox_id)

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
                    observe: ObserveOptions | None = None) -> Observation:
        self.steps = 0
        return await self.observe(observe)

    async def observe(self, options: ObserveOptions | None = None) -> Observation:
        opts = options or ObserveOptions()
        frame = opts.frame or self.screen
        shot = None
        if opts.screenshot:
            out = io.BytesIO()
            Image.new("RGB", (frame.width, frame.height), (40, 90, 160)).save(out, "PNG")
            shot = Screenshot(format="png", width=frame.width, height=frame.height, data=out.getvalue())
        return Observation(sandbox_id=self.id, frame=frame, screen=self.screen, screenshot=shot, step=self.steps)

    async def act(self, action: Action, *, frame: Size | None = None,
                  observe: ObserveOptions | None = None) -> Observation:
        from cua.errors import ActionFailed
        from cua.observation import ActionError

        try:
            scale_action(action, frame or self.screen, self.screen, foreign=frozenset({"goto", "back", "forward"}))
        except ActionFailed as exc:
            obs = await self.observe(observe)
            return obs.model_copy(update={"error": ActionError(reason=exc.reason, message=exc.message)})
        self.steps += 1
        return await self.observe(observe)

    async def close(self) -> None:
        self.closed = True

    def info(self) -> SandboxInfo:
        return SandboxInfo(id=self.id, kind=self.kind, screen=self.screen,
                           status="closed" if self.closed else "ready")

    @property
    def alive(self) -> bool:
        return not self.closed
