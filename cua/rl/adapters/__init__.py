"""Trainer adapters: cua episodes in the shapes TRL, verl and SkyRL expect.

- `cua.rl.adapters.trl`: `CuaRolloutFunc`, a GRPOTrainer `rollout_func` that asks the
  rollout service (`cua rollout serve`) for groups of whole episodes and returns their
  token ids, logprobs, an `env_mask` (model tokens 1, environment tokens 0; all 0 for a
  masked sample) and the judge's reward.
- `cua.rl.adapters.verl`: `CuaAgentLoop`, a verl `AgentLoopBase` whose `run` plays one
  episode with verl's own inference server and returns an `AgentLoopOutput`.
- `cua.rl.adapters.skyrl`: `CuaSkyRLEnv`, a SkyRL `BaseTextEnv` (`init` / `step` / `close`)
  whose messages carry the screenshot as an image part.
- `cua.rl.adapters.chat`: what they share: the model family's prompt for an observation
  (OpenAI chat format, image as a data URL) and the parse of the model's text to actions.

Each imports its trainer library only when used (the `trainers` extra).
"""
