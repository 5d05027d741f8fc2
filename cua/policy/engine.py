"""`ModelPolicy`: a model family plus a chat backend, with per-session history.

The engine owns what is common to every model: it prepares the screenshot at the size
the family's model sees, keeps each session's turns (all texts, the last N
screenshots), asks the backend for a completion, and has the family parse it. A
completion that does not parse becomes a `PolicyStep` with a typed `parse_error`;
backend failures (model server down, timeouts) raise typed `cua.errors` so that the
caller can tell an infrastructure fault from a bad generation.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import ValidationError

from cua.observation import Observation, Size
from cua.policy.base import Generation, ParseError, PolicyOptions, PolicyStep
from cua.policy.demo import Demo, demo_messages
from cua.policy.families import Family, FamilyParseError, Parsed, PreparedImage, Turn, get_family
from cua.policy.families.base import Message
from cua.policy.imaging import ModelFrame, decode_image, encode_image

__all__ = [
    "ChatBackend",
    "Completion",
    "CompletionRequest",
    "ModelPolicy",
    "PolicyMetrics",
    "Prompt",
    "build_prompt",
    "parse_output",
    "prepare_image",
    "remember_turn",
    "text_state",
]

DEFAULT_HISTORY_IMAGES = 3
#: Sessions kept before the least recently used one is forgotten.
MAX_SESSIONS = 4096


@dataclass
class CompletionRequest:
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    logprobs: bool = False
    top_logprobs: int | None = None
    tools: list[dict[str, Any]] | None = None


class Completion(Generation):
    """A backend's answer: the generated text, the tool calls of servers that parse them
    out of it, and the `Generation` facts the `PolicyStep` carries on."""

    text: str
    tool_calls: list[dict[str, Any]] | None = None


class ChatBackend(Protocol):
    """Turns neutral chat messages (text and `PreparedImage` parts) into a completion."""

    name: str

    async def complete(self, messages: list[Message], request: CompletionRequest) -> Completion: ...

    async def aclose(self) -> None: ...


@dataclass
class PolicyMetrics:
    """Counters a server exposes: calls and parse failures, by family."""

    calls: Counter[str] = field(default_factory=Counter)
    parse_errors: Counter[str] = field(default_factory=Counter)
    backend_errors: Counter[str] = field(default_factory=Counter)
    tokens_prompt: int = 0
    tokens_completion: int = 0

    def count(self, family: str, step: PolicyStep) -> None:
        self.calls[family] += 1
        if step.parse_error is not None:
            self.parse_errors[family] += 1
        if step.tokens is not None:
            self.tokens_prompt += step.tokens.prompt
            self.tokens_completion += step.tokens.completion

    def snapshot(self) -> dict[str, Any]:
        return {
            "calls": dict(self.calls),
            "parse_errors": dict(self.parse_errors),
            "backend_errors": dict(self.backend_errors),
            "tokens": {"prompt": self.tokens_prompt, "completion": self.tokens_completion},
        }


def prepare_image(observation: Observation, model: ModelFrame, fmt: str = "png") -> PreparedImage | None:
    """The observation's screenshot at the model's image size. Sent as it is when the
    sizes already match; otherwise decoded, resized (bicubic, as the Qwen processors
    do) and re-encoded in the screenshot's own format (PNG for WebP)."""
    shot = observation.screenshot
    if shot is None:
        return None
    if (shot.width, shot.height) == (model.image.width, model.image.height):
        return PreparedImage(size=model.image, data=shot.data, format=shot.format)
    from PIL import Image as PILImage

    image = decode_image(shot.data).resize((model.image.width, model.image.height), PILImage.Resampling.BICUBIC)
    out_format = shot.format if shot.format == "jpeg" else fmt
    return PreparedImage(size=model.image, data=encode_image(image, out_format, 95), format=out_format, _pil=image)


def text_state(observation: Observation, axtree_chars: int = 20000) -> str | None:
    """The optional text state (URL, title, accessibility tree) as prompt text."""
    lines = []
    if observation.url:
        lines.append(f"URL: {observation.url}")
    if observation.title:
        lines.append(f"Title: {observation.title}")
    if observation.axtree:
        tree = json.dumps(observation.axtree, ensure_ascii=False, separators=(",", ":"))
        lines.append(f"Accessibility tree: {tree[:axtree_chars]}")
    if observation.error is not None:
        lines.append(f"The previous action failed: {observation.error.message}")
    return "\n".join(lines) or None


@dataclass
class Prompt:
    """What the model is sent for one observation: the messages (system text, task, the
    screenshot history, the text state) and what they were built from."""

    messages: list[Message]
    model: ModelFrame
    image: PreparedImage | None
    text_state: str | None
    #: Tools for the request's `tools` field (families with ``tool_api``), else None.
    tools: list[dict[str, Any]] | None


def build_prompt(
    family: Family,
    instruction: str,
    turns: list[Turn],
    observation: Observation,
    max_images: int,
    image: PreparedImage | None = None,
    demo: Demo | None = None,
) -> Prompt:
    """The prompt for `observation` after `turns`: the one code path that serving
    (`ModelPolicy.act`) and training-data export (`cua.export`) both use, so the system
    text, the image size and the screenshot history cannot drift apart. `image` is the
    observation's screenshot already prepared for the model, when the caller has it.
    `demo`: a demonstration put right after the system text, before the task
    (`cua.policy.demo.demo_messages`)."""
    model = family.model_frame(observation.frame)
    if image is None:
        image = prepare_image(observation, model, family.image_format)
    state = text_state(observation)
    messages = family.build_messages(instruction, turns, image, state, model, max_images)
    if demo is not None:
        at = 1 if messages and messages[0]["role"] == "system" else 0
        messages[at:at] = demo_messages(family, demo)
    return Prompt(messages=messages, model=model, image=image, text_state=state, tools=family.request_tools(model))


def remember_turn(turns: list[Turn], prompt: Prompt, text: str, max_images: int) -> None:
    """Append the answer given to `prompt` to the history and let go of screenshot bytes
    that no later prompt shows (the next one shows the last `max_images - 1` past ones)."""
    turns.append(Turn(image=prompt.image, raw=text, text_state=prompt.text_state))
    keep = max(0, max_images - 1)
    for turn in turns[: max(0, len(turns) - keep)]:
        if turn.image is not None and not turn.image.dropped:
            turn.image = PreparedImage(size=turn.image.size, data=b"", format=turn.image.format)


def parse_output(
    family: Family,
    raw: str,
    frame: Size,
    pointer: tuple[float, float] | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
) -> tuple[Parsed | None, ParseError | None, tuple[float, float] | None]:
    """Parse one model output for `frame`; never raises for a bad output.

    Returns (parsed, None, new pointer) or (None, ParseError, old pointer)."""
    ctx = family.context(frame, pointer)
    try:
        parsed = family.parse_tool_calls(tool_calls, raw, ctx) if tool_calls else family.parse(raw, ctx)
    except FamilyParseError as exc:
        return None, ParseError(family=family.name, message=str(exc), raw=raw), pointer
    except ValidationError as exc:  # a well-formed call with values no action accepts
        first = exc.errors()[0]
        message = f"invalid action value at {'.'.join(map(str, first['loc']))}: {first['msg']}"
        return None, ParseError(family=family.name, message=message, raw=raw), pointer
    return parsed, None, ctx.pointer


@dataclass
class _Session:
    turns: list[Turn] = field(default_factory=list)
    pointer: tuple[float, float] | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class ModelPolicy:
    """A `Policy` backed by a model: family (prompt + parser) x backend (inference)."""

    def __init__(
        self,
        backend: ChatBackend,
        *,
        family: str = "qwen2.5-vl",
        history_images: int = DEFAULT_HISTORY_IMAGES,
        family_options: dict[str, Any] | None = None,
        defaults: PolicyOptions | None = None,
        max_sessions: int = MAX_SESSIONS,
    ) -> None:
        self.backend = backend
        self.family_name = family
        self.family_options = dict(family_options or {})
        get_family(family, **self.family_options)  # fail early on a bad name
        self.history_images = history_images
        self.defaults = defaults or PolicyOptions()
        self.metrics = PolicyMetrics()
        self._families: dict[str, Family] = {}
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._max_sessions = max_sessions

    def family(self, name: str | None = None) -> Family:
        name = name or self.family_name
        if name not in self._families:
            options = self.family_options if name == self.family_name else {}
            self._families[name] = get_family(name, **options)
        return self._families[name]

    def _session(self, session_id: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            session = self._sessions[session_id] = _Session()
            while len(self._sessions) > self._max_sessions:
                self._sessions.popitem(last=False)
        self._sessions.move_to_end(session_id)
        return session

    async def act(
        self,
        session_id: str,
        instruction: str,
        observation: Observation,
        options: PolicyOptions | None = None,
    ) -> PolicyStep:
        opts = _merge(self.defaults, options)
        family = self.family(opts.family)
        max_images = opts.history_images or self.history_images
        session = self._session(session_id)
        async with session.lock:
            t0 = time.perf_counter()
            model = family.model_frame(observation.frame)
            shot = observation.screenshot
            image: PreparedImage | None = None
            if shot is not None and (shot.width, shot.height) != (model.image.width, model.image.height):
                # decoding and resizing takes tens of ms: keep the event loop serving
                image = await asyncio.to_thread(prepare_image, observation, model, family.image_format)
            prompt = build_prompt(family, instruction, session.turns, observation, max_images, image, opts.demo)
            messages = prompt.messages
            t1 = time.perf_counter()
            request = CompletionRequest(
                temperature=opts.temperature, top_p=opts.top_p, max_tokens=opts.max_tokens, seed=opts.seed,
                logprobs=opts.logprobs, top_logprobs=opts.top_logprobs, tools=prompt.tools,
            )
            try:
                completion = await self.backend.complete(messages, request)
            except Exception:
                self.metrics.backend_errors[family.name] += 1
                raise
            t2 = time.perf_counter()
            parsed, error, pointer = parse_output(
                family, completion.text, observation.frame, session.pointer, completion.tool_calls
            )
            t3 = time.perf_counter()
            history_text = parsed.history_text if parsed is not None and parsed.history_text else completion.text
            remember_turn(session.turns, prompt, history_text, max_images)
            session.pointer = pointer
            generation = {name: getattr(completion, name) for name in Generation.model_fields}
            generation["logprobs"] = completion.logprobs if opts.logprobs else None
            generation["timings_ms"] = {
                **completion.timings_ms,
                "prompt": (t1 - t0) * 1000,
                "model": (t2 - t1) * 1000,
                "parse": (t3 - t2) * 1000,
            }
            step = PolicyStep(
                actions=parsed.actions if parsed is not None else [],
                raw=completion.text,
                thought=parsed.thought if parsed is not None else None,
                parse_error=error,
                **generation,
            )
        self.metrics.count(family.name, step)
        return step

    async def reset(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    async def aclose(self) -> None:
        self._sessions.clear()
        await self.backend.aclose()


def _merge(defaults: PolicyOptions, options: PolicyOptions | None) -> PolicyOptions:
    if options is None:
        return defaults
    merged = defaults.model_dump()
    merged.update(options.model_dump(exclude_unset=True, exclude_none=True))
    return PolicyOptions(**merged)
