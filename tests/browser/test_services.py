"""Host services of a shared sandbox: what runs is what the spec says.

A service runs its argv as its own process unless its spec names an app host
(`app_host`); then it is an instance inside that host, found by name in the registry.
These drive the real processes and their control sockets (no browser).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from cua.errors import BadRequest
from cua.sandbox import ServiceSpec
from cua.sandboxes.browser.services import (
    HostedApp,
    HostService,
    ServiceControl,
    app_host_command,
    register_app_host,
    start_host_service,
)
from cua.tasks.apps import APP_HOST, host_command, service

SERVE = [sys.executable, "-m", "cua.tasks.apps.serve"]


def _never_dies(name: str, code: int | None) -> None:
    raise AssertionError(f"service {name} died with {code}")


async def _health(path: str) -> dict[str, object]:
    control = ServiceControl("app", path, 10)
    try:
        return await control.health()
    finally:
        await control.aclose()


@pytest.mark.slow  # starts app processes (a few seconds each on a loaded machine)
async def test_a_spec_without_app_host_runs_its_own_argv(tmp_path: Path) -> None:
    # even the bundled app's own command line is run as written, not swapped for the host
    spec = ServiceSpec(name="app", argv=[*SERVE, "todo"])
    svc = await start_host_service(spec, str(tmp_path / "a.sock"), 3, _never_dies)
    try:
        assert isinstance(svc, HostService)
        assert svc.proc.returncode is None
        assert (await _health(svc.socket_path))["seed"] == 3
    finally:
        await svc.stop()
    assert svc.proc.returncode is not None and not Path(svc.socket_path).exists()


@pytest.mark.slow  # starts app processes (a few seconds each on a loaded machine)
async def test_a_spec_naming_the_bundled_host_shares_one_process(tmp_path: Path) -> None:
    a = ServiceSpec.model_validate(service("todo"))
    b = ServiceSpec.model_validate(service("mail"))
    assert a.app_host is not None and a.app_host.host == APP_HOST
    first = await start_host_service(a, str(tmp_path / "a.sock"), 1, _never_dies)
    second = await start_host_service(b, str(tmp_path / "b.sock"), 2, _never_dies)
    try:
        assert isinstance(first, HostedApp) and isinstance(second, HostedApp)
        assert first.host is second.host and first.host.instances == 2
        assert first.port != second.port
        assert await _health(first.socket_path) == {"ok": True, "app": "todo", "seed": 1}
        assert await _health(second.socket_path) == {"ok": True, "app": "mail", "seed": 2}
    finally:
        await first.stop()
        assert second.host.proc.returncode is None  # still serving the other instance
        await second.stop()
    await second.host.proc.wait()
    assert second.host.proc.returncode is not None  # the last instance stopped the host


@pytest.mark.slow  # starts app processes (a few seconds each on a loaded machine)
async def test_use_app_host_false_runs_the_argv(tmp_path: Path) -> None:
    spec = ServiceSpec.model_validate(service("todo"))
    svc = await start_host_service(spec, str(tmp_path / "a.sock"), 0, _never_dies, use_app_host=False)
    try:
        assert isinstance(svc, HostService) and svc.proc.returncode is None
    finally:
        await svc.stop()


@pytest.mark.slow  # starts app processes (a few seconds each on a loaded machine)
async def test_a_host_registered_by_name_serves_its_services(tmp_path: Path) -> None:
    register_app_host("test-host", host_command)
    spec = ServiceSpec.model_validate({**service("notes"), "app_host": {"host": "test-host", "app": "notes"}})
    svc = await start_host_service(spec, str(tmp_path / "n.sock"), 5, _never_dies)
    try:
        assert isinstance(svc, HostedApp) and svc.host.name == "test-host"
        assert (await _health(svc.socket_path))["app"] == "notes"
    finally:
        await svc.stop()


@pytest.mark.slow  # starts app processes (a few seconds each on a loaded machine)
async def test_unknown_host_and_unknown_app_are_the_clients_fault(tmp_path: Path) -> None:
    with pytest.raises(BadRequest, match="no app host named 'nowhere'.*bundled"):
        app_host_command("nowhere")
    spec = ServiceSpec.model_validate({**service("todo"), "app_host": {"host": "nowhere", "app": "todo"}})
    with pytest.raises(BadRequest) as info:
        await start_host_service(spec, str(tmp_path / "x.sock"), 0, _never_dies)
    assert info.value.details == {"field": "services"}
    unknown_app = ServiceSpec.model_validate({**service("todo"), "app_host": {"host": APP_HOST, "app": "no-such-app"}})
    with pytest.raises(BadRequest, match="no-such-app"):
        await start_host_service(unknown_app, str(tmp_path / "y.sock"), 0, _never_dies)


def test_an_app_host_spec_refuses_env_it_could_not_apply() -> None:
    with pytest.raises(ValidationError, match="env cannot reach an app inside a shared app host"):
        ServiceSpec.model_validate({**service("todo"), "env": {"DEBUG": "1"}})
    with pytest.raises(ValidationError):
        ServiceSpec.model_validate({**service("todo"), "app_host": {"host": "bundled"}})


@pytest.mark.slow  # starts an app process
async def test_a_service_refusing_its_configuration_is_the_clients_fault(tmp_path: Path) -> None:
    # the contract's EX_USAGE exit before `ready`: an unknown app named on the command line
    spec = ServiceSpec(name="app", argv=[*SERVE, "no-such-app"])
    with pytest.raises(BadRequest, match="no-such-app") as info:
        await start_host_service(spec, str(tmp_path / "z.sock"), 0, _never_dies)
    assert info.value.details == {"field": "services"}


@pytest.mark.slow  # starts app processes (a few seconds each on a loaded machine)
async def test_the_bundled_host_stops_many_instances_at_once_and_keeps_each_sockets_order(tmp_path: Path) -> None:
    """Commands run side by side (a server closing many sandboxes at once is not held up
    behind one stop at a time), and each runs after the previous one on its socket: a stop
    sent right behind its start stops the started instance instead of finding nothing."""
    import asyncio
    import socket

    spec = ServiceSpec.model_validate(service("todo"))
    apps = await asyncio.gather(*(start_host_service(spec, str(tmp_path / f"{i}.sock"), i, _never_dies)
                                  for i in range(16)))
    host = apps[0].host  # type: ignore[union-attr]
    assert all(isinstance(a, HostedApp) and a.host is host for a in apps) and host.instances == 16
    assert [(await _health(a.socket_path))["seed"] for a in apps] == list(range(16))

    path = str(tmp_path / "quick.sock")
    started, stopped = await asyncio.gather(host.request(op="start", app="todo", socket=path, seed=0),
                                            host.request(op="stop", socket=path))
    assert started["ok"] and stopped["ok"] and not Path(path).exists()
    with pytest.raises(OSError):  # the instance the stop found is gone: its port is closed
        socket.create_connection(("127.0.0.1", started["port"]), timeout=2).close()

    ports = [a.port for a in apps]
    await asyncio.gather(*(a.stop() for a in apps))
    assert not any(Path(a.socket_path).exists() for a in apps)
    for port in ports:
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
    await host.proc.wait()


async def test_a_start_cancelled_before_ready_leaves_no_process(tmp_path: Path) -> None:
    """A sandbox start given up half way (the fork pool's spare, cancelled when the last
    sandbox closes) stops the service it was waiting for; it ran on before."""
    pid_file = tmp_path / "pid"
    script = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(60)"
    spec = ServiceSpec(name="slow", argv=[sys.executable, "-c", script, str(pid_file)])
    task = asyncio.ensure_future(HostService.start(spec, str(tmp_path / "s.sock"), 0, _never_dies))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert loop.time() < deadline, "the service never started"
        await asyncio.sleep(0.02)
    pid = int(pid_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # stopped and reaped
