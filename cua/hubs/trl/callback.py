"""`ReleaseSandboxes`: TRL's trainer keeps its environments in a pool and never closes them;
this callback closes every cua environment's sandbox when training ends."""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from cua.hubs.trl.environment import release_all

__all__ = ["ReleaseSandboxes"]


class ReleaseSandboxes(TrainerCallback):
    """Pass it in `callbacks=[...]`: at `on_train_end` every live `CuaToolEnv` is closed (an
    environment the trainer resets again later opens a fresh sandbox)."""

    def on_train_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                     **kwargs: Any) -> None:
        release_all()
