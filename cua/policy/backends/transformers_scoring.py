"""Teacher forcing over the ids the sampler drew: the logprobs an RL trainer recomputes.

A policy-gradient step scores again, with gradients, the very tokens the policy sampled.
The sequence scored is the prompt ids and the completion ids exactly as the transformers
backend returned them (`Step.prompt_token_ids`, `Step.token_ids`), never text decoded and
tokenized again: decoding drops special tokens or, tokenized again, reads them back as
structure, and merges differ, so the ids trained on would not be the ids sampled.

Ids alone are not enough for a Qwen-VL forward, which reads structure off `input_ids`: it
puts the image features at every `<|image_pad|>` it finds (and refuses a count that
differs from the features), and lays out 3D rope positions from the modality of each
token. A model can emit `<|image_pad|>`, `<|vision_start|>` or `<|im_end|>` in its
answer (a random one does, often). While sampling these were text: `generate` marks every
new token as text, embeds it from the embedding table and gives it the next position. So
structure is read from the prompt alone, which the backend built: the prompt's
placeholders are the image's tokens, every completion token is text
(`token_types`), and the forward receives embeddings with the image features put at the
prompt's placeholders only, and the position ids of those types, never ids to read again.

The same token types go to `generate` (the backend passes them as `mm_token_type_ids`, as
transformers' own Qwen-VL processor does), so the sampler's positions and these agree,
and `completion_logprobs` matches the sampler's logprobs to float rounding.

Qwen2-VL and Qwen2.5-VL checkpoints (what the backend's prompt assembly supports) are
scored; another architecture is refused (`Unsupported`) rather than scored wrongly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cua.errors import BadRequest, Unsupported

__all__ = ["IMAGE", "TEXT", "VIDEO", "completion_logprobs", "generation_token_types", "token_types"]

#: The modality of a token in `mm_token_type_ids`: text, an image's or a video's placeholder.
TEXT, IMAGE, VIDEO = 0, 1, 2


def token_types(ids: Sequence[int], *, prompt_len: int, image_token_id: int,
                video_token_id: int | None = None) -> list[int]:
    """Each token's modality: a placeholder of the first `prompt_len` ids (the prompt the
    backend built) is an image's or a video's; everything after it, whatever its id, is text
    the model emitted."""
    types = [TEXT] * len(ids)
    for position in range(min(prompt_len, len(ids))):
        if ids[position] == image_token_id:
            types[position] = IMAGE
        elif video_token_id is not None and ids[position] == video_token_id:
            types[position] = VIDEO
    return types


def _is_qwen_vl(model: Any) -> bool:
    from transformers import Qwen2_5_VLForConditionalGeneration, Qwen2VLForConditionalGeneration

    return isinstance(model, (Qwen2_5_VLForConditionalGeneration, Qwen2VLForConditionalGeneration))


def _qwen_vl_model(model: Any) -> Any:
    """The inner `Qwen2VLModel`/`Qwen2_5_VLModel` (its rope layout and vision tower)."""
    if not _is_qwen_vl(model):
        raise Unsupported(f"token-faithful scoring supports Qwen2-VL and Qwen2.5-VL checkpoints, "
                          f"not {type(model).__name__}")
    return model.model


def generation_token_types(model: Any, input_ids: Any) -> Any:
    """`mm_token_type_ids` for `generate` over a batch of prompts the backend built (every
    placeholder in them is an image's), or None for an architecture that takes none."""
    if not _is_qwen_vl(model):
        return None
    return (input_ids == model.config.image_token_id).long() * IMAGE


def completion_logprobs(model: Any, prompt_ids: Sequence[int], completion_ids: Sequence[int], *,
                        pixel_values: Any = None, image_grid_thw: Any = None) -> Any:
    """The log-probability of each completion id after the ids before it, as a 1-D tensor
    (with gradients unless the caller turned them off).

    `pixel_values` and `image_grid_thw` are the image processor's output for the prompt's
    images, in prompt order (the backend's `image_processor` on the images it was given);
    the prompt must hold exactly the placeholders those grids yield (`BadRequest` if not).
    """
    import torch

    inner = _qwen_vl_model(model)
    config = model.config
    ids = [*prompt_ids, *completion_ids]
    if not prompt_ids:
        raise BadRequest("a completion is scored after its prompt: the prompt ids are empty")
    if not completion_ids:
        return torch.zeros(0, device=model.device)
    types = token_types(ids, prompt_len=len(prompt_ids), image_token_id=config.image_token_id,
                        video_token_id=config.video_token_id)
    if VIDEO in types:
        raise Unsupported("scoring a prompt with video placeholders is not supported (the backend sends images only)")
    device = model.device
    input_ids = torch.tensor([ids], device=device)
    type_ids = torch.tensor([types], device=device)
    embeds = model.get_input_embeddings()(input_ids)
    placeholders = types.count(IMAGE)
    grid = None
    if pixel_values is not None:
        grid = image_grid_thw.to(device)
        merge = int(config.vision_config.spatial_merge_size)
        expected = int((grid.prod(-1) // (merge * merge)).sum())
        if expected != placeholders:
            raise BadRequest(f"the prompt holds {placeholders} image placeholders but its images yield {expected} "
                             "tokens: pass the images the prompt was built with, in order")
        features = inner.get_image_features(pixel_values.to(device), grid, return_dict=True).pooler_output
        image_embeds = torch.cat(list(features), dim=0).to(embeds.device, embeds.dtype)
        mask = (type_ids == IMAGE).unsqueeze(-1).expand_as(embeds)
        embeds = embeds.masked_scatter(mask, image_embeds)
    elif placeholders:
        raise BadRequest(f"the prompt holds {placeholders} image placeholders and no images were given")
    if grid is not None:
        position_ids, _ = inner.get_rope_index(input_ids, mm_token_type_ids=type_ids, image_grid_thw=grid)
    else:  # text only: one position after another, as the model infers itself
        position_ids = torch.arange(len(ids), device=device).view(1, 1, -1).expand(3, 1, -1)
    logits = model(inputs_embeds=embeds, position_ids=position_ids, use_cache=False).logits[0]
    start = len(prompt_ids) - 1  # the logits at position i predict token i + 1
    scores = logits[start:start + len(completion_ids)].float().log_softmax(-1)
    targets = torch.tensor(list(completion_ids), device=scores.device)
    return scores.gather(1, targets[:, None])[:, 0]
