"""cua tasks as TRL `environment_factory` classes (`GRPOTrainer`): the unified actions as tools,
screenshots as multimodal tool results, the task's judge as the reward. See `environment`."""

from cua.hubs.trl.callback import ReleaseSandboxes
from cua.hubs.trl.environment import BrowserToolEnv, CuaToolEnv, DesktopToolEnv, FakeToolEnv, release_all

__all__ = ["BrowserToolEnv", "CuaToolEnv", "DesktopToolEnv", "FakeToolEnv", "ReleaseSandboxes", "release_all"]
