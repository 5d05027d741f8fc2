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
from cua.policy.engine import ModelPolicy  # noqa: E402

pytestmark = pytest.mark.slow

# QwenLM/Qwen3-VL cookbooks/mobile_agent.ipynb ("Agent Function Call with Qwen2.5-VL"):
# the recorded answer of Qwen2.5-VL-7B-Instruct (made on a 1092x2408 phone screenshot;
# replayed here on a smaller frame that still contains the point, to keep the test light).
RECORDED = '\n<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [935, 406]}}\n</tool_call>'
PHONE = Size(width=952, height=420)  # multiples of 28: smart_resize keeps the size as it is

CHAT_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}{% if part['type'] == 'image' %}"
    "<|vision_start|><|image_pad|><|vision_end|>{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def build_tiny_qwen25_vl(out: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    # byte-level BPE without merges: every byte is a token, so any text round-trips
    alphabet = sorted(set(pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
                "<|image_pad|>", "<|video_pad|>"]
    tokenizer.add_special_tokens(specials)
    tokenizer.add_tokens(["<tool_call>", "</tool_call>"])  # plain added tokens, as in Qwen's vocabulary
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)
    ids = {s: tokenizer.token_to_id(s) for s in specials}
    config = Qwen2_5_VLConfig(
        text_config=dict(
            vocab_size=tokenizer.get_vocab_size(), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=8192,
            rope_scaling={"type": "mrope", "mrope_section": [2, 3, 3]}, tie_word_embeddings=True,
            bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"],
        ),
        vision_config=dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64,
                           patch_size=14, spatial_merge_size=2, temporal_patch_size=2, window_size=448,
                           fullatt_block_indexes=[1]),
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
        eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"], bos_token_id=ids["<|endoftext|>"],
    )
    torch.manual_seed(0)
    Qwen2_5_VLForConditionalGeneration(config).save_pretrained(out)
    Qwen2VLImageProcessorPil(min_pixels=4 * 28 * 28, max_pixels=16384 * 28 * 28).save_pretrained(out)


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

    # the logprobs are the model's own: a teacher-forced forward pass agrees
    model, processor = backend.model, backend.image_processor
    features = processor(images=[Image.open(io.BytesIO(obs.screenshot.data)).convert("RGB")], return_tensors="pt")
    sequence = torch.tensor([step.prompt_token_ids + step.token_ids], device=model.device)
    with torch.inference_mode():
        logits = model(input_ids=sequence, pixel_values=features["pixel_values"].to(model.device),
                       image_grid_thw=features["image_grid_thw"].to(model.device)).logits[0].float().log_softmax(-1)
    prompt_len = len(step.prompt_token_ids)
    recomputed = [float(logits[prompt_len - 1 + i, t]) for i, t in enumerate(step.token_ids)]
    assert recomputed == pytest.approx([t.logprob for t in step.logprobs], abs=2e-3)

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
