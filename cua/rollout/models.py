"""The rollout service's wire types: what a trainer sends and what it gets back.

`json_schema()` publishes them (`cua rollout schema`), for trainers in other languages."""

from __future__ import annotations

import base64
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from cua.errors import ErrorRecord, FailureClass
from cua.observation import ActionError, ImageFormat, Observation, Size
from cua.rollout.curriculum import CurriculumView
from cua.task import Verdict
from cua.trajectory import FramePolicy

__all__ = ["CreateEnvRequest", "EnvClosed", "EnvCreated", "EnvEnded", "EnvForked", "EnvObservation", "EnvScreenshot",
           "EnvSnapshot", "EnvState", "EnvStep", "EnvStepped", "ForkEnvRequest", "GroupResult", "PolicyEndpoint",
           "PolicyVersion", "PolicyVersionRequest", "ResetEnvRequest", "RolloutRequest", "RolloutResponse",
           "RolloutTrajectory", "StepEnvRequest", "TaskSample", "json_schema"]


class PolicyEndpoint(BaseModel):
    """An OpenAI-compatible chat completions server (vLLM, SGLang, a hosted API...)."""

    model_config = ConfigDict(extra="forbid")
    #: The API root, e.g. http://host:8000/v1.
    base_url: str
    model: str
    api_key: str | None = None
    #: The prompt and action format of the model (`cua.policy` families).
    family: str = "qwen2.5-vl"
    temperature: float | None = 1.0
    top_p: float | None = None
    max_tokens: int | None = None
    history_images: int | None = None


class TaskSample(BaseModel):
    """Tasks the service's curriculum draws (`GET /curriculum`): `count` prompts, each a
    template of `pool` drawn by the curriculum's rule at a seed drawn from [0, seeds)."""

    model_config = ConfigDict(extra="forbid")
    #: Template ids (`todo.mark_done@1`) to draw from.
    pool: list[str] = Field(min_length=1)
    count: int = Field(1, ge=1, le=10_000)
    seeds: int = Field(1000, ge=1)
    #: Seeds the draw (the same state, pool and rng_seed give the same tasks); None: fresh.
    rng_seed: int | None = None


class RolloutRequest(BaseModel):
    """Run `n` prompts (seeds) of every task, each prompt a group of `group_size` rollouts
    that start from one forked state; or `sample` prompts drawn by the curriculum."""

    model_config = ConfigDict(extra="forbid")
    policy: PolicyEndpoint
    #: Template ids (`todo.mark_done@1`); or none, with `sample`.
    tasks: list[str] = Field(default_factory=list)
    sample: TaskSample | None = None
    n: int = Field(1, ge=1, le=10_000)
    group_size: int = Field(1, ge=1, le=256)
    #: Explicit seeds (one per prompt, `n` ignored); else `seed_start`, `seed_start + 1`, ...
    seeds: list[int] | None = None
    seed_start: int = 0
    #: The version of the policy the trainer will train these on; tagged on every episode.
    policy_version: int = Field(0, ge=0)
    max_steps: int | None = Field(None, ge=1)
    #: "dense" also keeps the judge's progress after every step (`StepLine.progress`).
    reward: Literal["sparse", "dense"] = "sparse"
    frames: FramePolicy = "last"
    #: Infrastructure retries per rollout (default: the service's).
    max_retries: int | None = Field(None, ge=0, le=10)
    isolation: Literal["shared", "container"] | None = None
    #: Return the step lines (with tokens) inline; the trajectories are on disk either way.
    inline_steps: bool = True
    #: Prompt injections planted in each prompt's app (`cua.episode.safety.with_attacks`,
    #: seeded by the prompt's seed); each rollout's `end.safety` says whether it was attacked.
    attacks: int = Field(0, ge=0, le=8)
    #: Branch from a recorded trajectory instead (its folder under the service's runs folder,
    #: e.g. a rollout's `folder`): one group started at step `from_step` of it (the state the agent
    #: acted on there), or one at each of its steps ("every": a tree rollout). The group's
    #: parent is the task's reset with the recorded actions before that step performed again,
    #: every screen checked against the recording (`cua.branch.replay_prefix`); its records
    #: name the parent trajectory and step (`parent`, `parent_step`, meta.extra["branch"]).
    from_trajectory: str | None = None
    from_step: Annotated[int, Field(ge=0)] | Literal["every"] | None = None
    #: Keep a snapshot of the state at every step (or every N-th) in each rollout's
    #: trajectory (`cua.branch.snapshots`); the rollout's sandbox is then kept, with them, for
    #: the service's `source_ttl_s` after its last use, so a later request's `from_step` at a
    #: step with a snapshot forks off it directly (its forks name it as their start snapshot).
    snapshots: Annotated[int, Field(ge=1)] | Literal["every", "none"] = "none"

    @model_validator(mode="after")
    def _tasks_or_sample(self) -> RolloutRequest:
        given = [bool(self.tasks), self.sample is not None, self.from_trajectory is not None]
        if sum(given) != 1:
            raise ValueError("give `tasks` (template ids), `sample` (drawn by the curriculum) or `from_trajectory` "
                             "(with `from_step`), one of them")
        if (self.from_trajectory is None) != (self.from_step is None):
            raise ValueError("`from_trajectory` and `from_step` go together")
        return self


class RolloutTrajectory(BaseModel):
    """One rollout: its trajectory in the shared format plus what a trainer reads first."""

    id: str
    group_id: str
    task_id: str
    seed: int
    policy_version: int
    #: completed: ran to its end (scored); infra_error: lost to the infrastructure after
    #: every retry; masked: completed, but another rollout of its group was lost; stale:
    #: not started, the policy moved on past the staleness bound.
    status: Literal["completed", "infra_error", "masked", "stale"]
    #: Leave this sample out of the loss: never a fake zero for an infrastructure fault.
    mask_sample: bool
    #: The judge's score of the final state; None (null) unless `status` is completed: a
    #: masked, lost or stale rollout has no score, never a 0.
    reward: float | None = None
    passed: bool | None = None
    #: Attempts made (each one is in the trajectory's `end.attempts`); 0 when never started.
    attempts: int = 1
    #: Why it did not pass: the failure class of `cua.episode.episode.failure_class`, for a
    #: lost rollout its error's (`error.failure`, e.g. model_unreachable, sandbox_crashed).
    failure: FailureClass | None = None
    #: The typed error that lost it.
    error: ErrorRecord | None = None
    #: The trajectory folder (`cua.trajectory`), on the service's disk.
    folder: str | None = None
    meta: dict[str, Any] | None = None
    #: The final attempt's `StepLine`s as JSON, each with its `tokens` (prompt/completion ids, logprobs).
    steps: list[dict[str, Any]] = Field(default_factory=list)
    end: dict[str, Any] | None = None
    #: env: sandbox work (reset, act, judge reads); model: time in the policy endpoint.
    timings_ms: dict[str, float] = Field(default_factory=dict)
    #: The trajectory it branched from (its meta id) and the step there it started at (`from_step`).
    parent: str | None = None
    parent_step: int | None = None


class GroupResult(BaseModel):
    group_id: str
    task_id: str
    seed: int
    #: The trajectory the group branched from (its meta id) and the step it started at (`from_step`).
    parent: str | None = None
    parent_step: int | None = None
    #: Every rollout of the group is masked (one was lost to the infrastructure).
    masked: bool
    trajectories: list[RolloutTrajectory]
    #: The Ray node whose worker ran the group, its sandboxes included (None: not on Ray).
    node: str | None = None
    #: Ray nodes that died running an earlier attempt of the group, in order (each counted in
    #: every rollout's `attempts`).
    lost_nodes: list[str] = Field(default_factory=list)


class RolloutResponse(BaseModel):
    request_id: str
    policy_version: int
    groups: list[GroupResult]
    #: The run folder holding every trajectory of this request.
    folder: str
    timings_ms: dict[str, float] = Field(default_factory=dict)


class PolicyVersionRequest(BaseModel):
    """`POST /policy_version`: the trainer's newest policy version (the staleness bound)."""

    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=0)


class CreateEnvRequest(BaseModel):
    """`POST /envs`: a sandbox reset to one task instance."""

    model_config = ConfigDict(extra="forbid")
    #: A template id (`todo.mark_done@1`).
    task: str
    seed: int = 0
    #: sparse: the judge's score at the end; dense: the change in progress every step.
    reward: Literal["sparse", "dense"] = "sparse"
    isolation: Literal["shared", "container"] | None = None
    #: End the episode (terminated) on the first step whose state the judge passes, as
    #: `CuaEnv(terminate_on_success=True)` does; kept by every reset of the environment.
    terminate_on_success: bool = False


class ResetEnvRequest(BaseModel):
    """`POST /envs/{id}/reset`: the next episode (`task`, `seed`; default: the current
    ones) or, with `snapshot`, back to a snapshot of this environment."""

    model_config = ConfigDict(extra="forbid")
    task: str | None = None
    seed: int | None = None
    snapshot: str | None = None


class StepEnvRequest(BaseModel):
    """`POST /envs/{id}/step`: one action (`cua.actions`, e.g. `{"type": "click", "x": 1, "y": 2}`),
    or null for a turn whose output was no action (a step that does nothing)."""

    model_config = ConfigDict(extra="forbid")
    action: dict[str, Any] | None


class ForkEnvRequest(BaseModel):
    """`POST /envs/{id}/fork`: `k` new environments continuing the live episode."""

    model_config = ConfigDict(extra="forbid")
    k: int = Field(1, ge=1, le=64)


class PolicyVersion(BaseModel):
    """The answer to `POST /policy_version`: the version the service now holds."""

    policy_version: int


class EnvScreenshot(BaseModel):
    """An observation's screenshot on the wire: its bytes as base64 (JPEG as the sandbox sent it)."""

    format: ImageFormat
    width: int
    height: int
    #: The image's bytes, base64.
    data: str


class EnvObservation(BaseModel):
    """An observation as an environment operation answers it (`cua.observation.Observation`
    without the accessibility tree and timings, its screenshot as base64)."""

    url: str | None
    title: str | None
    frame: Size
    screenshot: EnvScreenshot | None
    #: The agent's action that could not be performed (the episode goes on).
    error: ActionError | None
    #: The sandbox's action counter.
    step: int

    @classmethod
    def of(cls, obs: Observation) -> EnvObservation:
        shot = obs.screenshot
        return cls(url=obs.url, title=obs.title, frame=obs.frame, error=obs.error, step=obs.step,
                   screenshot=EnvScreenshot(format=shot.format, width=shot.width, height=shot.height,
                                            data=base64.b64encode(shot.data).decode()) if shot else None)


class EnvState(BaseModel):
    """Where an environment's episode is: the answer to a reset, and the start of every other."""

    observation: EnvObservation
    instruction: str
    task_id: str
    seed: int
    #: Steps taken in this episode.
    step: int
    #: The episode is over (terminated or truncated): reset before the next step.
    over: bool


class EnvCreated(EnvState):
    """`POST /envs` (and each of a fork's): the new environment's id and its state."""

    env_id: str

    @model_serializer(mode="wrap")
    def _id_first(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {"env_id": data.pop("env_id"), **data}


class EnvStepped(EnvState):
    """What every step answers besides the state: the one transition (`RewardAccount`)."""

    #: Sparse: the judge's score at the end (0 before); dense: the change in progress.
    reward: float
    terminated: bool
    truncated: bool


class EnvStep(EnvStepped):
    """A step of an episode that goes on, or ended without a verdict."""

    #: The judge's progress after the step (dense reward), else null.
    progress: float | None


class EnvEnded(EnvStepped):
    """The step that ended the episode, with the judge's verdict of its final state."""

    verdict: Verdict


class EnvSnapshot(BaseModel):
    """`POST /envs/{id}/snapshot`: the snapshot's id, for `reset` with `snapshot`."""

    snapshot: str


class EnvForked(BaseModel):
    """`POST /envs/{id}/fork`: the new environments, each continuing the live episode."""

    envs: list[EnvCreated]


class EnvClosed(BaseModel):
    """`DELETE /envs/{id}`: the environment closed."""

    closed: str


#: Route -> (request model, response model); None: no body.
ROUTES: dict[str, tuple[type[BaseModel] | None, type[BaseModel] | None]] = {
    "POST /rollouts": (RolloutRequest, RolloutResponse),
    "POST /policy_version": (PolicyVersionRequest, PolicyVersion),
    "POST /envs": (CreateEnvRequest, EnvCreated),
    "POST /envs/{env_id}/reset": (ResetEnvRequest, EnvState),
    "POST /envs/{env_id}/step": (StepEnvRequest, EnvStep),
    "POST /envs/{env_id}/snapshot": (None, EnvSnapshot),
    "POST /envs/{env_id}/fork": (ForkEnvRequest, EnvForked),
    "DELETE /envs/{env_id}": (None, EnvClosed),
    "GET /curriculum": (None, CurriculumView),
}
#: Answers a route gives besides its response model: the step that ends the episode.
ALSO: dict[str, tuple[type[BaseModel], ...]] = {"POST /envs/{env_id}/step": (EnvEnded,)}


def json_schema() -> dict[str, Any]:
    """JSON Schema of every request and of the rollout response, by route."""
    models = {m.__name__: m for pair in [*ROUTES.values(), *ALSO.values()] for m in pair if m is not None}
    return {
        "format": "cua.rollout",
        "routes": {route: {"request": req.__name__ if req else None, "response": resp.__name__ if resp else None,
                           **({"also": [m.__name__ for m in ALSO[route]]} if route in ALSO else {})}
                   for route, (req, resp) in ROUTES.items()},
        "websocket_ops": {"rollouts": "RolloutRequest", "policy_version": "PolicyVersionRequest",
                          "create": "CreateEnvRequest", "reset": "ResetEnvRequest + env_id",
                          "step": "StepEnvRequest + env_id", "snapshot": "env_id", "fork": "ForkEnvRequest + env_id",
                          "close": "env_id", "curriculum": "(none)"},
        "schemas": {name: model.model_json_schema() for name, model in models.items()},
    }
