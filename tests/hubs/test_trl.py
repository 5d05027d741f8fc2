"""cua's TRL environments (`cua.hubs.trl`) on the fake kind: the tools as the model calls them,
and TRL's own `GRPOTrainer` for one step on the CPU with the tiny random Qwen2.5-VL.

A random model never calls a tool, so the trainer test steers its sampling with a logits
processor that forces one answer: a tool call that clicks the counter's "+" as often as the
seed needs, then `done`; after the tool results, it ends its turn. Everything else is TRL's:
the prompt with the tools' schema and the first screenshot, parsing the call, running the
tools, the screenshots in the tool results fed back to the model, the reward, the update.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")

import torch  # noqa: E402
from PIL import Image  # noqa: E402

from cua.errors import BadRequest  # noqa: E402
from cua.hubs.trl import FakeToolEnv, ReleaseSandboxes, release_all  # noqa: E402
from cua.hubs.trl.environment import _LIVE  # noqa: E402
from cua.observation import Size  # noqa: E402
from cua.policy.tiny import build_tiny_qwen25_vl  # noqa: E402

TASK = "fake.set_counter@1"
FRAME = Size(width=320, height=200)


def _start_and_target(seed: int) -> tuple[int, int]:
    """The counter's start (the fake screen's own reset) and the task's target, for a seed."""
    from cua.sandboxes.fake.screen import FormScreen
    from cua.tasks.registry import get_template

    instance = get_template(TASK).instantiate(seed)
    screen = FormScreen(Size(width=640, height=400), "")
    screen.reset(instance.reset_seed)
    return screen.state.count, int(instance.params["goal"]["target"])


def _seed_needing(clicks: range) -> tuple[int, int]:
    for seed in range(100):
        start, target = _start_and_target(seed)
        if target - start in clicks:
            return seed, target - start
    raise AssertionError("no seed")


#: The "+" button's centre in FRAME (the fake screen's layout at 640x400, halved).
PLUS = (224.0, 43.0)


def test_tools_act_and_the_judge_pays() -> None:
    seed, clicks = _seed_needing(range(1, 4))
    with FakeToolEnv(task=TASK, frame=FRAME) as env:
        first = env.reset(seed=seed, prompt=[{"role": "user", "content": "x"}])  # a row's other columns are ignored
        assert isinstance(first, list) and isinstance(first[0]["image"], Image.Image)
        assert first[0]["image"].size == (320, 200)
        assert "Set the counter to" in first[1]["text"]
        result = env.click(x=PLUS[0], y=PLUS[1], count=clicks)
        assert isinstance(result, list) and result[0]["type"] == "image" and result[0]["image"].size == (320, 200)
        assert result[0]["image"].tobytes() != first[0]["image"].tobytes()  # the counter changed on screen
        env.done()
        assert env.get_reward() == 1.0
        assert env.click(x=1.0, y=1.0) == "error: the episode is over; no further actions are taken"
        # the same row again starts afresh; leaving without `done` is judged as it stands
        env.reset(task=TASK, seed=seed)
        assert env.get_reward() == 0.0


def test_the_tools_trl_sees_are_the_actions() -> None:
    """TRL makes every public function of the class a tool: nothing else may be public."""
    import inspect

    from cua.hubs.trl import BrowserToolEnv, DesktopToolEnv

    def tools(cls: type) -> set[str]:
        return {n for n, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
                if not n.startswith("_") and n not in ("reset", "get_reward")}

    actions = {"click", "move", "drag", "scroll", "type", "key", "wait", "done"}
    assert tools(FakeToolEnv) == tools(DesktopToolEnv) == actions
    assert tools(BrowserToolEnv) == actions | {"goto", "back", "forward"}


def test_the_models_mistakes_are_tool_errors_and_a_rows_are_not() -> None:
    with FakeToolEnv(frame=FRAME) as env:
        assert env.click(x=1.0, y=1.0).startswith("error: no task is running")
        with pytest.raises(BadRequest, match="needs a task"):
            env.reset(seed=0)
        with pytest.raises(BadRequest, match="browser task"):
            env.reset(task="todo.mark_done@1", seed=0)
        with pytest.raises(BadRequest):
            env.reset(task="no.such_task@1", seed=0)
        env.reset(task=TASK, seed=0)
        assert env.click(x="a", y=3.0) == "error: click: x: Input should be a valid number"  # type: ignore[arg-type]
        assert env.click(x=1.0, y=1.0, button="thumb").startswith("error: click: button:")
        assert env.click(x=1e9, y=1.0).startswith("error: click: x:")
        assert env.key(keys="").startswith("error: key: keys:")
        assert env.done(status="maybe").startswith("error: done: status:")
        assert env.wait(seconds=-1).startswith("error: wait: seconds:")
        assert env.drag(x1=0, y1=0, x2=float("nan"), y2=0).startswith("error: drag:")
        # none of them was a step: the episode goes on
        assert isinstance(env.key(keys="Tab"), list)


def test_release_all_closes_every_open_environment() -> None:
    envs = [FakeToolEnv(task=TASK, frame=FRAME) for _ in range(2)]
    for env in envs:
        env.reset(seed=1)
    assert all(env._handle is not None for env in envs)
    assert release_all() >= 2
    assert all(env._handle is None and env._loop is None for env in envs)
    assert not any(env in _LIVE for env in envs)
    envs[0].reset(seed=2)  # a trainer that resets again after the release gets a fresh sandbox
    assert envs[0]._handle is not None
    envs[0]._close()


class ForceAnswer:
    """A logits processor: the first assistant turn (system, user, assistant: three messages)
    says `answer` (token ids) and ends; a turn after a tool result ends at once."""

    def __init__(self, answer: list[int], start: int, end: int, prefix: int) -> None:
        self.answer, self.start, self.end, self.prefix = answer, start, end, prefix

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        forced = torch.full_like(scores, float("-inf"))
        for row, ids in enumerate(input_ids.tolist()):
            last = len(ids) - 1 - ids[::-1].index(self.start)
            made = len(ids) - last - 1 - self.prefix  # tokens after "<|im_start|>assistant\n"
            target = self.end if ids.count(self.start) > 3 or made >= len(self.answer) else self.answer[made]
            forced[row, target] = 0.0
        return forced


def image_only_processor() -> Any:
    """Qwen2.5-VL's processor without its video processor: transformers' `AutoProcessor` would
    build one, which needs torchvision (not installed; the kit reads images only)."""
    from transformers import Qwen2_5_VLProcessor
    from transformers.processing_utils import ProcessorMixin

    class ImageOnlyQwen25VLProcessor(Qwen2_5_VLProcessor):  # type: ignore[misc]
        def __init__(self, image_processor: Any = None, tokenizer: Any = None, chat_template: str | None = None,
                     **kwargs: Any) -> None:  # the sub-processors are read off this signature
            self.image_token, self.video_token = "<|image_pad|>", "<|video_pad|>"
            self.image_token_id = tokenizer.convert_tokens_to_ids(self.image_token)
            self.video_token_id = tokenizer.convert_tokens_to_ids(self.video_token)
            ProcessorMixin.__init__(self, image_processor, tokenizer, chat_template=chat_template)

    return ImageOnlyQwen25VLProcessor


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tiny-qwen25-vl")
    build_tiny_qwen25_vl(out)
    return out


@pytest.mark.slow  # the model runs (a few seconds on a CPU)
@pytest.mark.filterwarnings("ignore:.*gradient_checkpointing.* is deprecated:FutureWarning")  # TRL's defaults
def test_one_grpo_step_with_trls_trainer(checkpoint: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import functools

    from datasets import Dataset
    from transformers import AutoImageProcessor, AutoTokenizer, LogitsProcessorList, Qwen2_5_VLForConditionalGeneration
    from trl import GRPOConfig, GRPOTrainer
    from trl.chat_template_utils import qwen3_vl_chat_template

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    torch.set_num_threads(1)
    seed, clicks = _seed_needing(range(1, 4))
    tok: Any = AutoTokenizer.from_pretrained(checkpoint)
    tok.chat_template = qwen3_vl_chat_template  # TRL's, with tool calls (the tiny one's has none)
    processor = image_only_processor()(image_processor=AutoImageProcessor.from_pretrained(checkpoint), tokenizer=tok,
                                       chat_template=qwen3_vl_chat_template)
    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(checkpoint, dtype=torch.float32)
    answer = (f'<tool_call>\n{{"name": "click", "arguments": {{"x": {PLUS[0]}, "y": {PLUS[1]}, "count": {clicks}}}}}'
              '\n</tool_call>\n<tool_call>\n{"name": "done", "arguments": {}}\n</tool_call>')
    force = ForceAnswer(tok.encode(answer, add_special_tokens=False), tok.convert_tokens_to_ids("<|im_start|>"),
                        tok.convert_tokens_to_ids("<|im_end|>"),
                        len(tok.encode("assistant\n", add_special_tokens=False)))
    model.generate = functools.partial(model.generate, logits_processor=LogitsProcessorList([force]))

    made: list[FakeToolEnv] = []

    def factory() -> FakeToolEnv:
        env = FakeToolEnv(frame=FRAME)
        made.append(env)
        return env

    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": "Use the tools."}], "task": TASK,
                                  "seed": seed}] * 2)
    args = GRPOConfig(output_dir=str(tmp_path / "out"), per_device_train_batch_size=2, num_generations=2,
                      max_completion_length=1024, max_steps=1, learning_rate=1e-3, logging_steps=1,
                      report_to="none", use_cpu=True, save_strategy="no", bf16=False, seed=0,
                      max_tool_calling_iterations=2)
    trainer = GRPOTrainer(model=model, args=args, train_dataset=dataset, processing_class=processor,
                          environment_factory=factory, callbacks=[ReleaseSandboxes()])
    trainer.train()
    # both rollouts called the tools, clicked the counter to its target and were paid 1 by the judge
    logged = {k: v for entry in trainer.state.log_history for k, v in entry.items()}
    assert (logged["rewards/FakeToolEnv/mean"], logged["rewards/FakeToolEnv/std"]) == (1.0, 0.0)
    assert logged["tools/call_frequency"] == 2.0 and logged["tools/failure_frequency"] == 0.0
    assert logged["reward"] == 1.0
    assert trainer.state.global_step == 1
    # the trainer is done: every environment it made released its sandbox
    assert made and all(env._handle is None and env._loop is None for env in made)
    if os.environ.get("CUA_TRL_TIMING"):
        print(logged)
