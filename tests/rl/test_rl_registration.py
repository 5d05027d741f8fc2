"""Gymnasium ids for every task template, made through `gymnasium.make`."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import cua.rl  # noqa: F401  (registers the ids; Gymnasium 1.x has no plugin hook)
from cua.rl.env import CuaEnv
from cua.rl.registration import env_id, register_envs, template_id
from cua.tasks.registry import list_templates


@pytest.mark.slow  # makes an env of each of the ~465 templates (seconds of CPU)
def test_every_template_has_an_id_that_makes_its_env():
    templates = list_templates()
    assert len(templates) > 100
    ids = register_envs()
    for template in templates:
        gid = env_id(template.id)
        assert gid in ids and template_id(gid) == template.id
        env = gym.make(gid)
        try:
            assert isinstance(env.unwrapped, CuaEnv) and env.unwrapped.template.id == template.id
            assert env.spec is not None and env.spec.id == gid
        finally:
            env.close()


def test_ids_round_trip_and_bad_ids_are_refused():
    assert env_id("todo.mark_done@1") == "cua/todo.mark_done-v1"
    assert template_id("cua/todo.mark_done-v12") == "todo.mark_done@12"
    with pytest.raises(ValueError):
        env_id("todo.mark_done")
    with pytest.raises(ValueError):
        template_id("other/todo.mark_done-v1")
    with pytest.raises(gym.error.NameNotFound):
        gym.make("cua/todo.no_such_task-v1")


@pytest.mark.slow  # a fresh interpreter imports gymnasium and cua
def test_module_prefix_registers_in_a_fresh_process_without_playwright():
    code = ("import sys, gymnasium as gym; env = gym.make('cua.rl:cua/todo.mark_done-v1'); "
            "assert 'playwright' not in sys.modules, 'registration imported playwright'; "
            "print(env.spec.id); env.close()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "cua/todo.mark_done-v1"


def test_entry_point_names_the_registration_function():
    from importlib.metadata import entry_points

    (ep,) = [e for e in entry_points(group="gymnasium.envs") if e.name == "cua"]
    assert ep.load() is register_envs


@pytest.mark.slow
def test_made_env_passes_check_env():
    env = gym.make("cua/todo.mark_done-v1", disable_env_checker=True)
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()
