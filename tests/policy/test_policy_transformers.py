"""The transformers backend on a tiny, randomly initialised Qwen2.5-VL built offline.

The checkpoint (config, weights, a from-scratch byte-level tokenizer with Qwen's
special tokens, the image processor config) is written to disk and loaded back through
the real `from_pretrained` path. A recorded Qwen2.5-VL output is forced through
`generate` with a LogitsProcessor, which proves the path tokens -> text -> parsed
action, and the returned logprobs are checked against a teacher-forced forward pass
(what an RL trainer recomputes).
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the transformers backend needs torch (pip install torch)")
transformers = pytest.importorskip("transformers")

from PIL import Image, ImageDraw  # noqa: E402

from cua.actions import Click  # noqa: E402
from cua.observation import Observation, Screenshot, Size  # noqa: E402
from cua.policy import PolicyOptions, make_policy  # noqa: E402
from cua.policy.backends.transformers import TransformersBackend  # noqa: E402
from cua.policy.backends.transformers_scoring import completion_logprobs  # noqa: E402
from cua.policy.engine import ModelPolicy  # noqa: E402
from cua.policy.tiny import build_tiny_qwen25_vl  # noqa: E402

pytestmark = pytest.mark.slow

# QwenLM/Qwen3-VL cookbooks/mobile_agent.ipynb ("Agent Function Call with Qwen2.5-VL"):
# the recorded answer of Qwen2.5-VL-7B-Instruct (made on a 1092x2408 phone screenshot;
# replayed here on a smaller frame that still contains the point, to keep the test light).
RECORDED = '\n<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [935, 406]}}\n</tool_call>'
PHONE = Size(width=952, height=420)  # multiples of 28: smart_resize keeps the size as it is


class ForceOutput(transformers.LogitsProcessor):
    """Makes generation emit exactly `target` (then EOS), whatever the model prefers."""

    def __init__(self, target: list[int], eos: int) -> None:
        self.target = [*target, eos]
        self.start: int | None = None
        self.last = -1

    def __call__(self, input_ids, scores):
        length = input_ids.shape[1]
        if self.start is None or length != self.last + 1:  # a new generate() call
            self.start = length
        self.last = length
        step = length - self.start
        token = self.target[min(step, len(self.target) - 1)]
        forced = torch.full_like(scores, float("-inf"))
        forced[:, token] = 0.0
        return forced


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """On a small, shared CPU, torch's worker threads mostly wait on each other: one
    thread runs this tiny model several times faster."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tiny-qwen25-vl")
    build_tiny_qwen25_vl(out)
    return out


def phone_screenshot() -> Observation:
    image = Image.new("RGB", (PHONE.width, PHONE.height), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((900, 380, 950, 419), fill=(30, 120, 220))  # the button the recorded answer taps
    draw.text((40, 40), "Files", fill="black")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    shot = Screenshot(format="png", width=PHONE.width, height=PHONE.height, data=buffer.getvalue())
    return Observation(sandbox_id="phone", frame=PHONE, screen=PHONE, screenshot=shot)


def rescore(backend: TransformersBackend, step, obs: Observation) -> list[float]:
    """What an RL trainer recomputes: the sampled ids scored again, teacher-forced, over
    the screenshot the model saw."""
    features = backend.image_processor(images=[Image.open(io.BytesIO(obs.screenshot.data)).convert("RGB")],
                                       return_tensors="pt")
    with torch.inference_mode():
        scores = completion_logprobs(backend.model, step.prompt_token_ids, step.token_ids,
                                     pixel_values=features["pixel_values"], image_grid_thw=features["image_grid_thw"])
    return scores.tolist()


async def test_forced_recorded_output_parses_with_logprobs_and_batches(checkpoint: Path):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    target = tokenizer.encode(RECORDED, add_special_tokens=False)
    assert tokenizer.decode(target) == RECORDED  # the tokenizer round-trips the recorded text
    # float32 on any device (CUDA when present), so the logprob check below is exact enough
    backend = TransformersBackend(str(checkpoint), logits_processors=[ForceOutput(target, tokenizer.eos_token_id)],
                                  max_new_tokens=len(target) + 4, batch_window_ms=50, dtype="float32")
    policy = ModelPolicy(backend, family="qwen2.5-vl", history_images=2)
    obs = phone_screenshot()
    step = await policy.act("s1", "Open the file manager app", obs, PolicyOptions(logprobs=True, top_logprobs=3))
    assert step.parse_error is None, step.parse_error
    assert step.raw == RECORDED
    assert step.actions == [Click(x=935, y=406)]
    assert step.finish_reason == "stop"
    assert step.token_ids == [*target, tokenizer.eos_token_id]
    assert step.tokens.completion == len(target) + 1 and step.tokens.prompt == len(step.prompt_token_ids)
    image_tokens = step.prompt_token_ids.count(tokenizer.convert_tokens_to_ids("<|image_pad|>"))
    assert image_tokens == (PHONE.width // 28) * (PHONE.height // 28)  # one per merged 2x2 patch block
    assert len(step.logprobs) == len(step.token_ids)
    assert all(t.logprob <= 0 and len(t.top) == 3 for t in step.logprobs)
    assert [t.token_id for t in step.logprobs] == step.token_ids

    # the logprobs are the model's own: a teacher-forced forward pass agrees, to float
    # rounding (the sampler lays the image out in 3D rope positions, as the scorer does;
    # with 1D positions they differ by about 1e-3)
    assert rescore(backend, step, obs) == pytest.approx([t.logprob for t in step.logprobs], abs=1e-4)

    # concurrent sessions are batched into one generate call, each parsed on its own
    steps = await asyncio.gather(*(policy.act(f"b{i}", "Open the file manager app", obs) for i in range(3)))
    assert all(s.actions == [Click(x=935, y=406)] for s in steps)
    assert backend.largest_batch >= 2
    assert any(s.timings_ms.get("batch_size", 1) >= 2 for s in steps)
    # the second turn of a session carries the first answer in its prompt
    second = await policy.act("s1", "Open the file manager app", obs)
    assert second.tokens.prompt > step.tokens.prompt + len(target)
    await policy.aclose()


async def test_sampled_garbage_is_a_parse_error_and_make_policy_spec(checkpoint: Path):
    policy = make_policy(f"transformers:{checkpoint}", family="qwen2.5-vl", max_new_tokens=8)
    step = await policy.act("s", "do something", phone_screenshot(), PolicyOptions(temperature=1.0, seed=3, max_tokens=8))
    assert step.parse_error is not None and step.parse_error.raw == step.raw  # random weights: no tool call
    assert step.actions == [] and len(step.token_ids) <= 8
    await policy.aclose()


async def test_special_tokens_in_an_answer_are_text_to_the_training_pass(checkpoint: Path):
    """A model may answer with Qwen's structural tokens (a random one often does). The
    sampler took them as text; the training pass scores the same ids the same way: the
    answer's <|image_pad|> is no image placeholder, its <|vision_start|> no image, and the
    recomputed logprobs (with gradients) agree with the sampler's."""
    from transformers import AutoTokenizer

    from cua.errors import BadRequest

    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    special = tokenizer.convert_tokens_to_ids
    answer = [special("<|vision_start|>"), special("<|image_pad|>"), special("<|image_pad|>"),
              special("<|vision_end|>"), special("<|im_start|>"), *tokenizer.encode("hi", add_special_tokens=False),
              special("<|video_pad|>")]
    backend = TransformersBackend(str(checkpoint), logits_processors=[ForceOutput(answer, tokenizer.eos_token_id)],
                                  max_new_tokens=len(answer) + 2, dtype="float32")
    policy = ModelPolicy(backend, family="qwen2.5-vl", history_images=1)
    obs = phone_screenshot()
    step = await policy.act("s", "Open the file manager app", obs, PolicyOptions(logprobs=True))
    assert step.token_ids == [*answer, tokenizer.eos_token_id]
    assert step.raw == "hi"  # the structural tokens are not text a parser or the history reads
    recomputed = rescore(backend, step, obs)
    assert recomputed == pytest.approx([t.logprob for t in step.logprobs], abs=1e-4)

    # the trainer's pass, with gradients, over the ids as sampled
    features = backend.image_processor(images=[Image.open(io.BytesIO(obs.screenshot.data)).convert("RGB")],
                                       return_tensors="pt")
    backend.model.zero_grad()
    scores = completion_logprobs(backend.model, step.prompt_token_ids, step.token_ids,
                                 pixel_values=features["pixel_values"], image_grid_thw=features["image_grid_thw"])
    scores.sum().backward()
    grads = [p.grad for p in backend.model.parameters() if p.grad is not None]
    assert grads and any(float(g.abs().sum()) > 0 for g in grads)
    backend.model.zero_grad()

    # the next turn's prompt holds the images' placeholders only
    second = await policy.act("s", "Open the file manager app", obs, PolicyOptions(logprobs=True))
    image_tokens = (PHONE.width // 28) * (PHONE.height // 28)
    assert second.prompt_token_ids.count(special("<|image_pad|>")) == image_tokens
    assert rescore(backend, second, obs) == pytest.approx([t.logprob for t in second.logprobs], abs=1e-4)

    # scoring checks the images against the prompt's placeholders, and says so
    with pytest.raises(BadRequest, match="placeholders"):
        completion_logprobs(backend.model, step.prompt_token_ids, step.token_ids)
    # a text part that spells the placeholder is refused, not read as a second image
    with pytest.raises(BadRequest, match="spells the image placeholder"):
        await policy.act("t", "Type <|image_pad|> in the box", obs)
    await policy.aclose()
