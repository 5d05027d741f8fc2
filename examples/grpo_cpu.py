"""A GRPO-style loop end to end on the CPU: a tiny random Qwen2.5-VL acting in real browser
sandboxes, groups forked from one state, a clipped policy-gradient step on its own tokens.

    python examples/grpo_cpu.py [--iterations 3] [--seeds 2] [--group 4] [--turns 2]

Each iteration, for every seed of `todo.mark_done@1`: one sandbox is reset to the task,
and `--group` forks of it (one snapshot, so the group starts identical) each run an
episode with the model (`cua.policy`: the Qwen2.5-VL prompt, the transformers backend,
its token ids and logprobs). Rewards are normalised within each group (GRPO's advantage),
and every turn's completion tokens are scored again with a teacher-forced forward pass
(the screenshot through the image processor, as the model saw it) for the clipped
surrogate loss; one AdamW step follows, and the next iteration samples from the new weights.

The training pass scores the ids the sampler drew, prompt and completion as they came
(`cua.policy.backends.transformers_scoring.completion_logprobs`), never the answer's text
tokenized again. A random model often answers with Qwen's structural tokens
(`<|image_pad|>`, `<|vision_start|>`, `<|im_end|>`); they were text to the sampler and
are text to the trainer: only the prompt's placeholders hold the image.

At the first step the ratio is 1 and the normalised advantages sum to 0, so the printed
loss is about 0 while its gradient is not (the grad norm is printed); `|old - recomputed
logprob|` shows the trainer's forward pass agrees with the sampler's logprobs.

A random model never does the task, so every judge score is 0 and a group's advantages
would all be 0 (GRPO learns nothing from a group whose rewards are equal). So that the
update runs, the demo adds a toy objective anyone can see move: the share of ASCII
letters in the answer (`--toy-weight`, 0 turns it off; use the judge alone with a real model).

The checkpoint is built offline in a temporary folder (`cua.policy.tiny`, no model hub).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TASK = "todo.mark_done@1"


@dataclass
class TurnSample:
    prompt_ids: list[int]
    completion_ids: list[int]
    old_logprobs: list[float]
    image: Any  # the PIL image the model saw
    text: str


@dataclass
class Rollout:
    turns: list[TurnSample]
    score: float
    reward: float = 0.0
    advantage: float = 0.0


def letters(text: str) -> float:
    return sum(c.isascii() and c.isalpha() for c in text) / max(1, len(text))


async def play(episode: Any, policy: Any, options: Any, turns: int, session: str) -> Rollout:
    from cua.policy.engine import prepare_image

    family = policy.family()
    samples: list[TurnSample] = []
    for _ in range(turns):
        if episode.over:
            break
        obs = episode.observation
        step = await policy.act(session, episode.instruction, obs, options)
        image = prepare_image(obs, family.model_frame(obs.frame), family.image_format)
        samples.append(TurnSample(step.prompt_token_ids or [], step.token_ids or [],
                                  [t.logprob for t in step.logprobs or []], image.pil() if image else None, step.raw))
        for action in step.actions or [None]:
            await episode.step(action)
            if episode.over:
                break
    verdict = await episode.judge()
    episode.finish()
    return Rollout(samples, verdict.score)


async def collect(policy: Any, options: Any, seeds: list[int], group: int, turns: int, iteration: int
                  ) -> list[list[Rollout]]:
    from cua.episode.episode import Episode
    from cua.episode.group import fork_episode
    from cua.episode.local import LocalSandbox
    from cua.tasks.registry import get_template

    groups = []
    for seed in seeds:
        instance = get_template(TASK).instantiate(seed)
        parent = await LocalSandbox.create("browser", {**instance.sandbox_config, "isolation": "shared"})
        try:
            base = Episode(parent, instance, producer="rl")
            await base.reset()
            forks = await fork_episode(base, group)
            try:
                groups.append(list(await asyncio.gather(*(
                    play(ep, policy, options, turns, f"it{iteration}-s{seed}-{j}") for j, ep in enumerate(forks)))))
            finally:
                await asyncio.gather(*(ep.handle.close() for ep in forks))
        finally:
            await parent.close()
    return groups


def update(model: Any, image_processor: Any, optimizer: Any, groups: list[list[Rollout]], toy_weight: float,
           clip: float = 0.2) -> dict[str, float]:
    import torch

    from cua.policy.backends.transformers_scoring import completion_logprobs

    for rollouts in groups:
        for r in rollouts:
            r.reward = r.score + toy_weight * statistics.fmean(letters(t.text) for t in r.turns) if r.turns else r.score
        rewards = [r.reward for r in rollouts]
        mean, std = statistics.fmean(rewards), statistics.pstdev(rewards)
        for r in rollouts:
            r.advantage = (r.reward - mean) / (std + 1e-6) if std > 0 else 0.0
    model.train()
    optimizer.zero_grad()
    losses, shift = [], []
    samples = [(t, r.advantage) for rollouts in groups for r in rollouts for t in r.turns if t.completion_ids]
    for turn, advantage in samples:
        features = image_processor(images=[turn.image], return_tensors="pt")
        new = completion_logprobs(model, turn.prompt_ids, turn.completion_ids, pixel_values=features["pixel_values"],
                                  image_grid_thw=features["image_grid_thw"])
        old = torch.tensor(turn.old_logprobs[:len(turn.completion_ids)], device=new.device)
        ratio = (new - old).exp()
        surrogate = torch.minimum(ratio * advantage, ratio.clamp(1 - clip, 1 + clip) * advantage)
        loss = -surrogate.mean() / len(samples)
        loss.backward()
        losses.append(float(loss.detach()) * len(samples))
        shift.append(float((new - old).detach().abs().mean()))
    grad_norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)) if samples else 0.0
    optimizer.step()
    model.eval()
    return {"loss": statistics.fmean(losses) if losses else 0.0, "grad_norm": grad_norm,
            "old_vs_recomputed_logprob": statistics.fmean(shift) if shift else 0.0, "samples": len(samples)}


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--seeds", type=int, default=2, help="prompts (task seeds) per iteration")
    ap.add_argument("--group", type=int, default=4, help="rollouts per prompt, forked from one state")
    ap.add_argument("--turns", type=int, default=2, help="model turns per episode")
    ap.add_argument("--max-tokens", type=int, default=24)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--toy-weight", type=float, default=1.0)
    args = ap.parse_args()

    import torch

    from cua.policy.backends.transformers import TransformersBackend
    from cua.policy.base import PolicyOptions
    from cua.policy.engine import ModelPolicy
    from cua.policy.tiny import build_tiny_qwen25_vl

    torch.set_num_threads(1)  # a tiny model on a small shared CPU: one thread is fastest
    with tempfile.TemporaryDirectory(prefix="tiny-qwen25-vl-") as folder:
        build_tiny_qwen25_vl(Path(folder))
        backend = TransformersBackend(folder, dtype="float32", max_new_tokens=args.max_tokens)
        policy = ModelPolicy(backend, family="qwen2.5-vl", history_images=1)
        options = PolicyOptions(temperature=1.0, logprobs=True, max_tokens=args.max_tokens)
        optimizer = None
        special: set[int] = set()
        for iteration in range(args.iterations):
            started = time.perf_counter()
            groups = await collect(policy, options, list(range(args.seeds)), args.group, args.turns, iteration)
            if optimizer is None:  # the backend loads the model at its first call
                optimizer = torch.optim.AdamW(backend.model.parameters(), lr=args.lr)
                special = {i for i, t in backend.tokenizer.added_tokens_decoder.items() if t.special}
                special.discard(backend.tokenizer.eos_token_id)
            stats = await asyncio.to_thread(update, backend.model, backend.image_processor, optimizer, groups,
                                            args.toy_weight)
            scores = [r.score for g in groups for r in g]
            toy = [statistics.fmean(letters(t.text) for t in r.turns) for g in groups for r in g if r.turns]
            answers = [t.completion_ids for g in groups for r in g for t in r.turns]
            structural = sum(any(i in special for i in ids) for ids in answers)
            print(f"iteration {iteration}: {len(scores)} episodes in {time.perf_counter() - started:.1f} s, "
                  f"judge score mean {statistics.fmean(scores):.2f}, letters share {statistics.fmean(toy):.3f}, "
                  f"loss {stats['loss']:+.4f} (grad norm {stats['grad_norm']:.3f}) over {stats['samples']} turns, "
                  f"|old - recomputed logprob| {stats['old_vs_recomputed_logprob']:.4f}; "
                  f"{structural} of {len(answers)} answers held special tokens", flush=True)
        await policy.aclose()


if __name__ == "__main__":
    asyncio.run(main())
