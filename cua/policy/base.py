"""The policy interface: an observation and an instruction in, unified actions out.

A policy never sees a sandbox or a judge. It receives what an agent would see (an
`Observation`) and answers with `cua.actions` in the observation's frame, plus what a
researcher needs to study or train the model behind it: the raw text, the thought,
token counts, and (for RL) per-token logprobs and token ids.

An output that cannot be parsed is not an exception: it comes back as a `PolicyStep`
with no actions and a typed `parse_error` that carries the raw text, so one bad
generation never ends an evaluation run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from cua.actions import Action
from cua.observation import Observation
from cua.policy.demo import Demo

__all__ = [
    "CallRetry",
    "Generation",
    "ParseError",
    "Policy",
    "PolicyOptions",
    "PolicyStep",
    "TokenCounts",
    "TokenLogprob",
    ]


class ParseError(BaseModel):
    """Why a model output could not be turned into actions; always carries the raw text."""

    model_config = ConfigDict(extra="forbid")
    code: Literal["parse_error"] = "parse_error"
    family: str
    message: str
    raw: str


class TokenCounts(BaseModel):
    model_config = ConfigDict(extra="forbid")
    prompt: int = Field(ge=0)
    completion: int = Field(ge=0)
    #: The prompt's tokens that stand for images (part of `prompt`), when the backend knows.
    image: int | None = Field(default=None, ge=0)

    @property
    def total(self) -> int:
        return self.prompt + self.completion

    @classmethod
    def total_of(cls, counts: Sequence[TokenCounts]) -> TokenCounts | None:
        """The tokens of all `counts` (None for none); image tokens only where every one
        reported them, so a partial count never reads as the whole."""
        if not counts:
            return None
        images = [c.image for c in counts]
        return cls(prompt=sum(c.prompt for c in counts), completion=sum(c.completion for c in counts),
                   image=None if None in images else sum(i or 0 for i in images))


class TokenLogprob(BaseModel):
    """One generated token: its id (when the backend knows it), text and logprob, and
    optionally the most likely alternatives at that position."""

    model_config = ConfigDict(extra="forbid")
    token: str
    logprob: float
    token_id: int | None = None
    top: list[TokenLogprob] | None = None


class PolicyOptions(BaseModel):
    """Per-call choices. Unset fields fall back to the policy's configured defaults."""

    model_config = ConfigDict(extra="forbid")
    #: The model family (prompt format + output parser), e.g. "qwen2.5-vl".
    family: str | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, gt=0, le=1)
    max_tokens: int | None = Field(None, ge=1, le=65536)
    seed: int | None = None
    #: Return per-token logprobs (and token ids where the backend offers them).
    logprobs: bool = False
    top_logprobs: int | None = Field(None, ge=0, le=20)
    #: How many past screenshots the prompt keeps (the current one included).
    history_images: int | None = Field(None, ge=1, le=64)
    #: A recorded episode of a similar task, put before the task in the prompt
    #: (`cua.policy.demo`; `cua eval --demo`).
    demo: Demo | None = None


class CallRetry(BaseModel):
    """One call to the model server that failed and was sent again (an HTTP 500, a dropped
    connection): kept so that a slow or flaky model shows in the trajectory, not only in time."""

    model_config = ConfigDict(extra="forbid")
    #: What went wrong, e.g. "HTTP 500: upstream overloaded" or "ConnectError: refused".
    error: str
    #: The HTTP status, when the server answered one.
    status: int | None = None
    #: How long the backend waited before sending the call again (milliseconds).
    backoff_ms: float = Field(0.0, ge=0)
    #: Wall-clock time of the failure (seconds since the epoch).
    t: float


class Generation(BaseModel):
    """What a model call yields besides its text and actions: token counts, logprobs, ids,
    the model's name, why it stopped, and where time went. A backend's `Completion` and
    the `PolicyStep` made from it both carry it, so a field is added once and the engine
    copies all of them (`Generation.model_fields`)."""

    model_config = ConfigDict(extra="forbid")
    tokens: TokenCounts | None = None
    #: Generated tokens with their logprobs, in order (when asked for and available).
    logprobs: list[TokenLogprob] | None = None
    #: Ids of the generated tokens (when the backend exposes them).
    token_ids: list[int] | None = None
    #: Ids of the prompt tokens (transformers backend only), for RL trainers that
    #: must recompute the same sequence.
    prompt_token_ids: list[int] | None = None
    model: str | None = None
    finish_reason: str | None = None
    #: Where time went: e.g. "model", "parse", "prompt", "queue", "server_total".
    timings_ms: dict[str, float] = Field(default_factory=dict)
    #: The failed calls that were retried before this answer came, in order.
    retries: list[CallRetry] = Field(default_factory=list)


class PolicyStep(Generation):
    """What one `Policy.act` call returns.

    `actions` are in the pixel frame of the observation they answer (`Observation.frame`),
    whatever frame the model itself worked in.
    """

    actions: list[Action] = Field(default_factory=list)
    raw: str = ""
    thought: str | None = None
    parse_error: ParseError | None = None

    @property
    def ok(self) -> bool:
        return self.parse_error is None


@runtime_checkable
class Policy(Protocol):
    """Anything that picks actions. Sessions are independent: each has its own history."""

    async def act(
        self,
        session_id: str,
        instruction: str,
        observation: Observation,
        options: PolicyOptions | None = None,
    ) -> PolicyStep: ...

    async def reset(self, session_id: str) -> None:
        """Forget the session's history (call at the start of every episode)."""
        ...

    async def aclose(self) -> None: ...
