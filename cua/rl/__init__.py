"""Online RL on cua sandboxes (needs the `rl` extra): a Gymnasium environment per task,
registered as `cua/<template>-v<N>` (see `cua.rl.registration`), and a vector env over
one server connection (`cua.rl.vector`)."""

from cua.rl.registration import register_envs

register_envs()
