"""A tiny, randomly initialised Qwen2.5-VL checkpoint, built offline: a test and demo helper.

    from cua.policy.tiny import build_tiny_qwen25_vl
    build_tiny_qwen25_vl(Path("/tmp/tiny"))  # then make_policy("transformers:/tmp/tiny", family="qwen2.5-vl")

No model hub is consulted: the config, the weights (seeded, a few hundred kB), a
from-scratch byte-level tokenizer with Qwen's special tokens and its chat template, and
the image processor config are written to `out`, and load back through the real
`from_pretrained` path. It answers garbage, which is the point: the tests and
`examples/grpo_cpu.py` exercise the transformers backend, its token ids and logprobs, and
a training step on the real model code, on any CPU. Needs the `policy` extra (torch,
transformers).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["CHAT_TEMPLATE", "SPECIAL_TOKENS", "build_tiny_qwen25_vl"]

#: Qwen2.5-VL's chat template, reduced to what the policy sends (text and images).
CHAT_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}{% if part['type'] == 'image' %}"
    "<|vision_start|><|image_pad|><|vision_end|>{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

#: Qwen's structural tokens, special in the tokenizer (as in the real vocabulary).
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
                  "<|image_pad|>", "<|video_pad|>")


def build_tiny_qwen25_vl(out: Path, *, seed: int = 0) -> None:
    """Write a loadable tiny Qwen2.5-VL checkpoint (2 text and 2 vision layers) to `out`."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    # byte-level BPE without merges: every byte is a token, so any text round-trips
    alphabet = sorted(set(pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens(list(SPECIAL_TOKENS))
    tokenizer.add_tokens(["<tool_call>", "</tool_call>"])  # plain added tokens, as in Qwen's vocabulary
    # Bound to Callables: transformers' annotations of these constructors vary by release (the
    # config takes the token ids of the whole model as keyword arguments it does not declare).
    make_tokenizer: Callable[..., Any] = PreTrainedTokenizerFast
    make_config: Callable[..., Any] = Qwen2_5_VLConfig
    fast = make_tokenizer(tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)
    ids = {s: tokenizer.token_to_id(s) for s in SPECIAL_TOKENS}
    config = make_config(
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
    torch.manual_seed(seed)
    Qwen2_5_VLForConditionalGeneration(config).save_pretrained(out)
    Qwen2VLImageProcessorPil(min_pixels=4 * 28 * 28, max_pixels=16384 * 28 * 28).save_pretrained(out)
