"""Build a policy from server options and run the server (used by `cua policy serve`,
and by anyone embedding the server in a test or a notebook)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import asynccontextmanager
from typing import Any

from cua.listen import tcp_listener
from cua.policy.base import Policy
from cua.policy.server import create_app, generate_token

__all__ = ["build_policy", "serve", "serving_app", "serving_policy"]


def build_policy(
    *,
    backend: str,
    family: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    script: str | None = None,
    history_images: int = 3,
    family_options: dict[str, Any] | None = None,
    device: str | None = None,
    dtype: str | None = None,
    max_batch: int = 8,
) -> tuple[Policy, dict[str, Any]]:
    """A policy and the facts /v1/health reports about it. Raises ValueError on bad options."""
    info: dict[str, Any] = {"backend": backend, "family": family}
    if backend == "scripted":
        from cua.policy.backends.scripted import ScriptedPolicy

        if not script:
            raise ValueError("--backend scripted needs --script FILE.jsonl")
        return ScriptedPolicy.from_file(script, family=family), info
    if not family:
        raise ValueError(f"--backend {backend} needs --family")
    from cua.policy.engine import ChatBackend, ModelPolicy

    chat: ChatBackend
    if backend == "openai":
        from cua.policy.backends.openai import OpenAIBackend

        if not model or not base_url:
            raise ValueError("--backend openai needs --model and --base-url")
        chat = OpenAIBackend(base_url=base_url, model=model, api_key=api_key)
        info["model"] = model
    elif backend == "transformers":
        from cua.policy.backends.transformers import TransformersBackend

        if not model:
            raise ValueError("--backend transformers needs --model PATH")
        chat = TransformersBackend(model, device=device, dtype=dtype, max_batch=max_batch)
        info["model"] = model
    else:
        raise ValueError(f"unknown backend {backend!r}")
    policy = ModelPolicy(chat, family=family, history_images=history_images, family_options=family_options)
    return policy, info


async def serve(
    policy: Policy, *, host: str = "127.0.0.1", port: int = 8765, token: str | None = None,
    info: dict[str, Any] | None = None, allowed_origins: Iterable[str] = (),
) -> None:
    """Serve until interrupted. Prints ``token=...`` (when generated) and then one line
    ``ready http://HOST:PORT`` once the socket accepts connections. Browser origins not
    in `allowed_origins` are refused (see `cua.policy.server`)."""
    import uvicorn

    generated = token is None
    token = token or generate_token()
    app = create_app(policy, token=token, info=info, host=host, allowed_origins=allowed_origins)
    sock = tcp_listener(host, port)
    # Listening before "ready" is printed: a client that reads the line connects at once,
    # and uvicorn listens only after its own startup (CI saw a refused connection).
    sock.listen(2048)
    bound_port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", ws_max_size=64 * 1024 * 1024)
    server = uvicorn.Server(config)
    if generated:
        print(f"token={token}", flush=True)
    url_host = f"[{host}]" if ":" in host else host
    print(f"ready http://{url_host}:{bound_port}", flush=True)
    sys.stdout.flush()
    await server.serve(sockets=[sock])


@asynccontextmanager
async def serving_app(app: Any, host: str = "127.0.0.1", port: int = 0, *,
                      ws_per_message_deflate: bool = True) -> AsyncIterator[str]:
    """Run an ASGI app with uvicorn inside the current event loop; yields its base URL.

    For embedding a policy server (or a stand-in model server, or the rollout service) in
    tests, notebooks and commands without a subprocess. The server stops when the block
    exits, and only then: it leaves the process's SIGINT and SIGTERM to the process
    (uvicorn would take them over and, on a signal meant for the process -- a Ctrl-C, a
    SIGTERM to its process group -- shut this server down, closing its websockets with
    1012, while the code that embeds it goes on). `ws_per_message_deflate` False: websockets
    uncompressed (a server whose messages are mostly already-compressed images)."""
    import uvicorn

    class Embedded(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    sock = tcp_listener(host, port)
    server = Embedded(uvicorn.Config(app, log_level="warning", lifespan="on", ws_max_size=64 * 1024 * 1024,
                                      ws_per_message_deflate=ws_per_message_deflate))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:  # uvicorn exposes a flag, not an event, for "listening"
        if task.done():
            task.result()
            raise RuntimeError("uvicorn stopped before it started listening")
        await asyncio.sleep(0.01)
    try:
        url_host = f"[{host}]" if ":" in host else host
        yield f"http://{url_host}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await task
        sock.close()


@asynccontextmanager
async def serving_policy(
    policy: Policy, *, token: str, info: dict[str, Any] | None = None, allowed_origins: Iterable[str] = (),
) -> AsyncIterator[str]:
    """A policy server for `policy` on a free loopback port, in this event loop."""
    app = create_app(policy, token=token, info=info, host="127.0.0.1", allowed_origins=allowed_origins)
    async with serving_app(app) as url:
        yield url
