"""Gymnasium ids for every task template: `gymnasium.make("cua/todo.mark_done-v1")`.

A template `suite.name@N` is the env `cua/suite.name-vN` (and `gymnasium.make_vec` of the
same id gives a `cua.rl.vector.CuaVectorEnv`). Registering only names the entry points
as strings, so it loads the task files but neither the env module nor Playwright; the
first `make` imports them.

How the ids get registered:
- `import cua.rl` (any of its modules) registers them, and `gymnasium.make("cua.rl:cua/...")`
  imports it on the way;
- pyproject.toml names `register_envs` under the `gymnasium.envs` entry-point group, the
  plugin hook through which Gymnasium 0.26-0.29 registered third-party envs on import.
  Gymnasium 1.x dropped that hook, so there the import above is what registers them.

Keyword arguments of `make` go to `CuaEnv` (server, reward, observe, max_steps...).
"""

from __future__ import annotations

import threading

__all__ = ["NAMESPACE", "env_id", "register_envs", "template_id"]

NAMESPACE = "cua"
ENV_ENTRY_POINT = "cua.rl.env:CuaEnv"
VECTOR_ENTRY_POINT = "cua.rl.vector:CuaVectorEnv"

_lock = threading.Lock()
_registered: set[str] = set()


def env_id(template_id: str) -> str:
    """`todo.mark_done@1` -> `cua/todo.mark_done-v1`."""
    name, sep, version = template_id.rpartition("@")
    if not sep or not version.isdigit():
        raise ValueError(f"a template id ends in @<version>, got {template_id!r}")
    return f"{NAMESPACE}/{name}-v{version}"


def template_id(gym_id: str) -> str:
    """`cua/todo.mark_done-v1` -> `todo.mark_done@1` (the inverse of `env_id`)."""
    from gymnasium.envs.registration import parse_env_id

    ns, name, version = parse_env_id(gym_id)
    if ns != NAMESPACE or version is None:
        raise ValueError(f"not a versioned cua env id: {gym_id!r}")
    return f"{name}@{version}"


def register_envs() -> list[str]:
    """Register every template's id (once per process; later calls add templates that
    appeared since, e.g. a suite installed through an entry point). Returns the ids."""
    from gymnasium.envs.registration import register, registry

    from cua.tasks.registry import list_templates

    with _lock:
        for template in list_templates():
            gid = env_id(template.id)
            if gid in _registered or gid in registry:
                _registered.add(gid)
                continue
            # The env truncates at the task's own step limit itself; no TimeLimit wrapper.
            register(id=gid, entry_point=ENV_ENTRY_POINT, vector_entry_point=VECTOR_ENTRY_POINT,
                     kwargs={"task": template.id}, nondeterministic=False)
            _registered.add(gid)
        return sorted(_registered)
