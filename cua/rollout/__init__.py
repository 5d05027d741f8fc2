"""The rollout service for RL trainers (`cua rollout serve`): groups of whole episodes
from one forked state against an OpenAI-compatible policy, token-faithful trajectories,
infrastructure faults masked per group, bounded staleness; and environment handles.

It drives `cua.episode` and writes `cua.trajectory`; it does not import cua.eval, cua.rl
or cua.record."""
