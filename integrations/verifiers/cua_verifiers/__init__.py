"""The verifiers plugin module for cua: verifiers imports an environment by its id
(`vf-eval cua-verifiers` imports `cua_verifiers`) and takes the Taskset and Env subclasses this
module exports; `load_environment(task=..., kind=...)` builds the same environment in code."""

from cua.hubs.verifiers.environment import CuaEnv, CuaTaskset, load_environment

__all__ = ["CuaEnv", "CuaTaskset", "load_environment"]
