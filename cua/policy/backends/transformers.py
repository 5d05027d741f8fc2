"""A local checkpoint through transformers, batched, with logprobs and token ids.

The model loads with `AutoModelForImageTextToText`, the tokenizer with `AutoTokenizer`
and the image processor with `AutoImageProcessor`; the prompt is assembled here rather
than by `AutoProcessor` (which drags in torchvision-only video processors for Qwen-VL):
the chat template renders the conversation, each image placeholder is expanded to
the number of vision tokens its patch grid yields, and the image processor supplies
``pixel_values`` and ``image_grid_thw``.

Concurrent requests are collected for a few milliseconds and run as one left-padded
`generate` call (requests with different sampling settings run in separate batches).
Per-token logprobs are those of the model's raw distribution (before temperature or
any logits processor), which is what a policy-gradient trainer needs; a trainer
recomputes them over the returned ids with `transformers_scoring.completion_logprobs`
(never from the decoded text: the ids trained on are the ids sampled).

Vision structure comes from the prompt this backend builds, never from text or from what
the model emits: `generate` gets each prompt token's modality (`mm_token_type_ids`, as
transformers' Qwen-VL processor makes it) for the images' 3D rope positions, and a text
part that spells the image placeholder is refused (`BadRequest`) rather than read as an
image.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from cua.errors import BadRequest, InternalError
from cua.policy.backends.transformers_scoring import generation_token_types
from cua.policy.base import TokenCounts, TokenLogprob
from cua.policy.engine import Completion, CompletionRequest
from cua.policy.families.base import Message

__all__ = ["DEFAULT_CHAT_TEMPLATE", "TransformersBackend"]

#: ChatML with Qwen's vision markers, for checkpoints that ship no chat template.
DEFAULT_CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'image' %}"
    "<|vision_start|><|image_pad|><|vision_end|>{% elif part['type'] == 'text' %}{{ part['text'] }}"
    "{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
IMAGE_PAD = "<|image_pad|>"


@dataclass
class _Pending:
    messages: list[Message]
    request: CompletionRequest
    future: asyncio.Future[Completion]
    queued_at: float

    def sampling_key(self) -> tuple[Any, ...]:
        r = self.request
        return (r.temperature or 0.0, r.top_p, r.max_tokens, r.seed, r.logprobs, r.top_logprobs)


class TransformersBackend:
    OPTION_NAMES: ClassVar[frozenset[str]] = frozenset(
        {"device", "dtype", "max_batch", "batch_window_ms", "max_new_tokens", "logits_processors"}
    )
    name = "transformers"

    def __init__(
        self,
        path: str,
        *,
        device: str | None = None,
        dtype: str | None = None,
        max_batch: int = 8,
        batch_window_ms: float = 5.0,
        max_new_tokens: int = 512,
        logits_processors: list[Any] | None = None,
    ) -> None:
        self.path = path
        self.device = device
        self.dtype = dtype
        self.max_batch = max(1, max_batch)
        self.batch_window_s = batch_window_ms / 1000
        self.max_new_tokens = max_new_tokens
        #: Extra `transformers.LogitsProcessor`s applied to every generation (e.g. to
        #: constrain decoding, or to force a recorded output for a replay).
        self.logits_processors = list(logits_processors or [])
        self.model: Any = None
        self.tokenizer: Any = None
        self.image_processor: Any = None
        self.chat_template: str | None = None
        self._queue: asyncio.Queue[_Pending] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._load_lock = asyncio.Lock()
        self.batches_run = 0
        self.largest_batch = 0

    # -- loading ---------------------------------------------------------------------
    def _load(self) -> None:
        import torch
        from transformers import AutoImageProcessor, AutoModelForImageTextToText, AutoTokenizer

        device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype_name = self.dtype or ("bfloat16" if device.startswith("cuda") else "float32")
        dtypes = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
        if dtype_name not in dtypes:
            raise ValueError(f"unknown dtype {dtype_name!r}; use one of {', '.join(dtypes)}")
        dtype = dtypes[dtype_name]
        self.model = AutoModelForImageTextToText.from_pretrained(self.path, dtype=dtype, device_map=device)
        self.model.eval()
        self.tokenizer = AutoTokenizer.from_pretrained(self.path)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        # Some transformers releases annotate AutoImageProcessor.from_pretrained and some
        # do not; binding it to a Callable keeps the call typed under either.
        load_image_processor: Callable[..., Any] = AutoImageProcessor.from_pretrained
        self.image_processor = load_image_processor(self.path)
        self.chat_template = self.tokenizer.chat_template or self._template_file() or DEFAULT_CHAT_TEMPLATE
        self.device = device

    def _template_file(self) -> str | None:
        import json

        root = Path(self.path)
        if (root / "chat_template.jinja").is_file():
            return (root / "chat_template.jinja").read_text(encoding="utf-8")
        if (root / "chat_template.json").is_file():
            data = json.loads((root / "chat_template.json").read_text(encoding="utf-8"))
            template = data.get("chat_template") if isinstance(data, dict) else None
            return template if isinstance(template, str) else None
        return None

    async def start(self) -> None:
        """Load the checkpoint (in a thread) and start the batching worker; idempotent."""
        async with self._load_lock:
            if self.model is None:
                await asyncio.to_thread(self._load)
            if self._worker is None or self._worker.done():
                self._queue = asyncio.Queue()
                self._worker = asyncio.create_task(self._run())

    # -- requests --------------------------------------------------------------------
    async def complete(self, messages: list[Message], request: CompletionRequest) -> Completion:
        for message in messages:
            for part in message["content"]:
                if part["type"] == "text" and IMAGE_PAD in part["text"]:
                    raise BadRequest(f"a text part of the prompt spells the image placeholder {IMAGE_PAD}, which "
                                     "would be read as an image")
        await self.start()
        assert self._queue is not None
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        await self._queue.put(_Pending(messages, request, future, time.perf_counter()))
        return await future

    async def _run(self) -> None:
        assert self._queue is not None
        loop = asyncio.get_running_loop()
        while True:
            batch = [await self._queue.get()]
            deadline = loop.time() + self.batch_window_s
            while len(batch) < self.max_batch:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                try:
                    batch.append(await asyncio.wait_for(self._queue.get(), remaining))
                except TimeoutError:
                    break
            groups: dict[tuple[Any, ...], list[_Pending]] = {}
            for item in batch:
                if not item.future.cancelled():
                    groups.setdefault(item.sampling_key(), []).append(item)
            for group in groups.values():
                try:
                    results = await asyncio.to_thread(self._generate, group)
                except Exception as exc:  # the callers get the failure, the worker goes on
                    error = InternalError(f"generation failed: {type(exc).__name__}: {exc}")
                    for item in group:
                        if not item.future.done():
                            item.future.set_exception(error)
                    continue
                for item, result in zip(group, results):
                    if not item.future.done():
                        item.future.set_result(result)

    # -- generation (worker thread) --------------------------------------------------
    def _render(self, messages: list[Message]) -> tuple[str, list[Any]]:
        images: list[Any] = []
        plain: list[dict[str, Any]] = []
        for message in messages:
            parts = []
            for part in message["content"]:
                if part["type"] == "image":
                    images.append(part["image"].pil())
                    parts.append({"type": "image"})
                else:
                    parts.append({"type": "text", "text": part["text"]})
            plain.append({"role": message["role"], "content": parts})
        text = self.tokenizer.apply_chat_template(
            plain, chat_template=self.chat_template, tokenize=False, add_generation_prompt=True
        )
        return text, images

    def _generate(self, group: list[_Pending]) -> list[Completion]:
        import torch

        started = time.perf_counter()
        texts: list[str] = []
        all_images: list[Any] = []
        for item in group:
            text, images = self._render(item.messages)
            texts.append(text)
            all_images.extend(images)
        vision: dict[str, Any] = {}
        if all_images:
            features = self.image_processor(images=all_images, return_tensors="pt")
            vision = {"pixel_values": features["pixel_values"], "image_grid_thw": features["image_grid_thw"]}
            merge = int(self.image_processor.merge_size)  # patches merged per side into one token
            counts = iter(int(g.prod()) // (merge * merge) for g in features["image_grid_thw"])
            texts = [self._expand_images(t, counts) for t in texts]
        inputs = self.tokenizer(texts, return_tensors="pt", padding=True)
        types = generation_token_types(self.model, inputs["input_ids"])
        if types is not None:  # the prompt's placeholders are the images' (what the scorer reads too)
            vision["mm_token_type_ids"] = types
        inputs = {k: v.to(self.model.device) for k, v in {**inputs, **vision}.items()}
        if "pixel_values" in inputs:
            inputs["pixel_values"] = inputs["pixel_values"].to(self.model.dtype)
        request = group[0].request
        eos = self.tokenizer.eos_token_id
        generation: dict[str, Any] = {
            "max_new_tokens": request.max_tokens or self.max_new_tokens,
            "return_dict_in_generate": True,
            "output_logits": bool(request.logprobs),
            "pad_token_id": self.tokenizer.pad_token_id,
            "eos_token_id": eos,
        }
        if request.temperature:
            generation.update(do_sample=True, temperature=request.temperature, top_p=request.top_p or 1.0)
        else:
            generation.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if self.logits_processors:
            from transformers import LogitsProcessorList

            generation["logits_processor"] = LogitsProcessorList(self.logits_processors)
        if request.seed is not None:
            torch.manual_seed(request.seed)
        prep_ms = (time.perf_counter() - started) * 1000
        with torch.inference_mode():
            output = self.model.generate(**inputs, **generation)
        gen_ms = (time.perf_counter() - started) * 1000 - prep_ms
        self.batches_run += 1
        self.largest_batch = max(self.largest_batch, len(group))
        prompt_len = inputs["input_ids"].shape[1]
        sequences = output.sequences[:, prompt_len:].tolist()
        logprob_rows = None
        if request.logprobs and output.logits:
            steps = torch.stack([step.float() for step in output.logits], dim=1).log_softmax(dim=-1)
            logprob_rows = steps
        results = []
        for row, item in enumerate(group):
            ids = sequences[row]
            if eos is not None and eos in ids:
                ids = ids[: ids.index(eos) + 1]
            else:
                ids = [t for t in ids if t != self.tokenizer.pad_token_id]
            text_ids = [t for t in ids if t != eos]
            text = self.tokenizer.decode(text_ids, skip_special_tokens=True)
            logprobs = None
            if logprob_rows is not None:
                logprobs = self._logprobs(logprob_rows[row], ids, item.request.top_logprobs or 0)
            mask = inputs["attention_mask"][row]
            prompt_ids = inputs["input_ids"][row][mask.bool()].tolist()
            finish = "stop" if eos is not None and ids and ids[-1] == eos else "length"
            results.append(
                Completion(
                    text=text,
                    tokens=TokenCounts(prompt=len(prompt_ids), completion=len(ids),
                                       image=prompt_ids.count(self.model.config.image_token_id)),
                    logprobs=logprobs,
                    token_ids=ids,
                    prompt_token_ids=prompt_ids,
                    finish_reason=finish,
                    model=self.path,
                    timings_ms={
                        "queue": (started - item.queued_at) * 1000,
                        "preprocess": prep_ms,
                        "generate": gen_ms,
                        "batch_size": float(len(group)),
                    },
                )
            )
        return results

    @staticmethod
    def _expand_images(text: str, counts: Any) -> str:
        pieces = text.split(IMAGE_PAD)
        out = [pieces[0]]
        for piece in pieces[1:]:
            out.append(IMAGE_PAD * next(counts))
            out.append(piece)
        return "".join(out)

    def _logprobs(self, rows: Any, ids: list[int], top: int) -> list[TokenLogprob]:
        import torch

        result = []
        for position, token_id in enumerate(ids):
            dist = rows[position]
            alternatives = None
            if top > 0:
                values, indices = torch.topk(dist, top)
                alternatives = [
                    TokenLogprob(token=self.tokenizer.decode([i]), logprob=float(v), token_id=int(i))
                    for v, i in zip(values.tolist(), indices.tolist())
                ]
            result.append(
                TokenLogprob(
                    token=self.tokenizer.decode([token_id]),
                    logprob=float(dist[token_id]),
                    token_id=int(token_id),
                    top=alternatives,
                )
            )
        return result

    async def aclose(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            try:
                await self._worker
            except asyncio.CancelledError:
                pass  # the worker was cancelled by us, as intended
            self._worker = None
        self.model = None


def from_spec(path: str, **kw: Any) -> Any:
    """`make_policy("transformers:PATH", family=..., device=..., dtype=...)`: a local checkpoint."""
    from cua.policy.engine import ModelPolicy

    backend_kw = {k: kw.pop(k) for k in list(kw) if k in TransformersBackend.OPTION_NAMES}
    return ModelPolicy(TransformersBackend(path, **backend_kw), **kw)
