"""Real-product server time (issue 31): the p50 of a direct HTTP GET (no browser) of the
two pages `bench/realapp_step.py` clicks between, on each product's own server and on the
bundled reference app's (notes), alternating one by one. It is the floor of a product's
step under the browser's part: no settle rule or browser change takes a step below it.

    python bench/realapp_render.py [--rounds 20] [--product NAME ...]

Prints `realapp_render_p50_ms_<product>=` (the two pages' GETs together) and
`app_render_p50_ms_notes=`. Each product runs as a sandbox runs it (`python -m
cua.tasks.apps.serve <app>`, seed 0); Roundcube's pages are read logged in (as Alice), and
its mail page's two requests that fill the page after load (the message list, the unread
counts) are timed too, as `realapp_render_p50_ms_roundcube_xhr=`. A product not installed
here is skipped with a line saying why.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from _latency import p50, spread  # bench/ is this script's folder
from _realapps import REFERENCE, missing

#: The pages `bench/_realapps.py`'s links lead to, by app.
PAGES = {
    "mediawiki": ("/wiki/Main_Page", "/wiki/Special:SpecialPages"),
    "trac": ("/wiki", "/roadmap"),
    "roundcube": ("/?_task=mail&_mbox=INBOX", "/?_task=settings"),
    "oscar": ("/catalogue/", "/accounts/login/"),
    "wagtail": ("/blog/", "/events/"),
    REFERENCE.app: ("/folders/1", "/folders/2"),
}
ROUNDCUBE_XHR = ("/?_task=mail&_action=list&_mbox=INBOX&_page=&_remote=1",
                 "/?_task=mail&_action=getunread&_page=1&_remote=1")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def served(app: str, folder: Path) -> Iterator[str]:
    """The base URL of a running service of `app`, stopped on the way out."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "cua.tasks.apps.serve", app, "--port", str(port),
                             "--socket", str(folder / f"{app}.sock")], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        if not any(line.strip() == "ready" for line in proc.stdout):
            raise RuntimeError(f"{app}: the service did not start")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(30)
        if proc.stdout is not None:
            proc.stdout.close()


def login_roundcube(client: httpx.Client) -> dict[str, str]:
    """Log Alice in through Roundcube's form; the headers its page's own requests carry."""
    token = re.search(r'name="_token" value="([^"]+)"', client.get("/").text)
    assert token is not None, "no login form"
    client.post("/?_task=login", data={"_token": token.group(1), "_task": "login", "_action": "login",
                                        "_timezone": "UTC", "_url": "", "_user": "alice.morgan@harborview.test",
                                        "_pass": "harbor-2026"})
    page = client.get(PAGES["roundcube"][0]).text
    request_token = re.search(r'"request_token":"([^"]+)"', page)
    assert request_token is not None, "not logged in"
    return {"X-Roundcube-Request": request_token.group(1), "X-Requested-With": "XMLHttpRequest"}


def timed_get(client: httpx.Client, path: str, headers: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    r = client.get(path, headers=headers)
    took = (time.perf_counter() - started) * 1000
    if r.status_code != 200:
        raise RuntimeError(f"GET {path}: {r.status_code}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--product", action="append", help="products to time (default: every one)")
    args = parser.parse_args()
    apps = [a for a in PAGES if a != REFERENCE.app and (not args.product or a in args.product)]
    with tempfile.TemporaryDirectory(prefix="realapp-render-") as tmp, \
            served(REFERENCE.app, Path(tmp)) as ref_base, httpx.Client(base_url=ref_base, timeout=60) as ref:
        ref_ms: list[float] = []
        for app in apps:
            why = missing(app)
            if why is not None:
                print(f"skipped {app}: {why}", flush=True)
                continue
            with served(app, Path(tmp)) as base, httpx.Client(base_url=base, timeout=60) as client:
                xhr_headers = login_roundcube(client) if app == "roundcube" else None
                samples: list[float] = []
                xhr: list[float] = []
                for i in range(args.rounds + 2):  # two rounds to warm up
                    keep = i >= 2
                    for page, ref_page in zip(PAGES[app], PAGES[REFERENCE.app]):
                        took, ref_took = timed_get(client, page), timed_get(ref, ref_page)
                        if keep:
                            samples.append(took)
                            ref_ms.append(ref_took)
                    if xhr_headers is not None:
                        took = sum(timed_get(client, path, xhr_headers) for path in ROUNDCUBE_XHR)
                        if keep:
                            xhr.append(took)
                print(f"realapp_render_p50_ms_{app}={p50(samples):.1f}  ({spread(samples, 1)})", flush=True)
                if xhr:
                    print(f"realapp_render_p50_ms_{app}_xhr={p50(xhr):.1f}  ({spread(xhr, 1)})", flush=True)
        if ref_ms:
            print(f"app_render_p50_ms_{REFERENCE.app}={p50(ref_ms):.1f}  ({spread(ref_ms, 1)})")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
