"""OSWorld-format tasks as cua templates: load a task file or a folder of them (such as a
user's `evaluation_examples`), run their config steps as setup, judge with their
evaluators' real getters and metrics.

- The sandbox is a VM of the `office` image (the `desktop` kind takes the same config):
  `download` steps become files written before the apps start (from the local cache
  folder, keyed by URL); `launch`, `open`, `execute`, `command`, `activate_window` run
  after reset as setup steps; `sleep` is replaced by waiting for the screen to settle.
- The judge declares the state its `result` getters read (files, command output, the
  accessibility tree, the guest Chromium's tabs) and computes each metric from those
  values; `conj` joins several. `postconfig` commands run inside the reading command,
  right before what they prepare is read. Every metric leaves evidence.
- A task whose step, getter or metric this adapter lacks loads as a template that says
  which, by name, when it is instantiated (so `cua tasks check` lists it), and its
  problem is recorded on the suite (`cua tasks list` prints it).
"""

from __future__ import annotations

import asyncio
import base64
import json
import shlex
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cua.actions import Action, Wait
from cua.state import CommandQuery, StateQuery, WindowsQuery
from cua.task import (
    Evidence,
    JudgeInput,
    OracleContext,
    TaskInstance,
    TaskSetup,
    TaskTags,
    Verdict,
    query_key,
)
from cua.tasks.loader import FormatProblem, TaskFormatError
from cua.tasks.osworld.format import ConfigStep, GetterSpec, OSWorldTask
from cua.tasks.osworld.getters import (
    GETTERS,
    HOST_GETTERS,
    GetterError,
    cached_bytes,
    guest_path,
    queries_of,
    value_of,
)
from cua.tasks.osworld.metrics import METRICS, MetricError

__all__ = ["SETUP_STEPS", "SUITE", "OSWorldJudge", "OSWorldTemplate", "load_osworld", "unsupported_names"]

SUITE = "osworld"
#: Config step types this adapter runs (`download` at instantiate, the rest after reset).
SETUP_STEPS = frozenset({"download", "launch", "open", "execute", "command", "activate_window", "sleep",
                         "close_window"})
#: OSWorld's Chrome is Debian's Chromium here.
_BINARIES = {"google-chrome": "chromium", "google-chrome-stable": "chromium", "code": "geany"}
#: How long a setup step may wait for the window it opens (a loaded machine is slow).
WINDOW_WAIT_S = 300.0


def unsupported_names(task: OSWorldTask) -> list[str]:
    """What in the task this adapter cannot run, by name (`metric:compare_foo`)."""
    out = [f"config:{s.type}" for s in task.config if s.type not in SETUP_STEPS]
    out += [f"postconfig:{s.type}" for s in task.evaluator.postconfig if s.type not in SETUP_STEPS - {"download"}]
    for func, result, expected, _ in task.evaluator.items():
        if func not in METRICS:
            out.append(f"metric:{func}")
        for spec in (result, expected):
            if spec is not None and spec.type not in GETTERS and spec.type not in HOST_GETTERS:
                out.append(f"getter:{spec.type}")
    return sorted(set(out))


# --- setup ---

def _argv(command: Any) -> list[str]:
    if isinstance(command, str):
        return ["sh", "-c", command]
    argv = [str(c) for c in command]
    return [_BINARIES.get(argv[0], argv[0]), *argv[1:]] if argv else argv


def _background(argv: list[str]) -> list[str]:
    line = " ".join(shlex.quote(a) for a in argv)
    return ["sh", "-c", f"setsid -f {line} >/dev/null 2>&1 </dev/null"]


def _opener(path: str) -> list[str]:
    suffix = Path(path).suffix.lower()
    office = {".xlsx": "--calc", ".xls": "--calc", ".ods": "--calc", ".csv": "--calc", ".docx": "--writer",
              ".doc": "--writer", ".odt": "--writer", ".pptx": "--impress", ".ppt": "--impress", ".odp": "--impress"}
    if suffix in office:
        return ["libreoffice", office[suffix], path]
    if suffix in (".png", ".jpg", ".jpeg", ".xcf"):
        return ["gimp", path]
    return ["xdg-open", path]


async def _windows(ctx: OracleContext) -> list[dict[str, Any]]:
    result = await ctx.query(WindowsQuery())
    return list(result.value["windows"]) if result.ok else []


async def _wait_new_window(ctx: OracleContext, before: set[int], title: str | None = None) -> None:
    deadline = time.monotonic() + WINDOW_WAIT_S
    while time.monotonic() < deadline:
        for w in await _windows(ctx):
            if w["id"] not in before and w.get("mapped", True) and (not title or title.lower() in
                                                                    (w.get("title") or "").lower()):
                return
        await asyncio.sleep(0.2)  # an app's first window: state, not an event, says it is up
    raise TaskFormatError([FormatProblem(SUITE, "config", f"no new window{f' titled {title!r}' if title else ''} "
                                                          f"within {WINDOW_WAIT_S:g} s")])


async def _run(ctx: OracleContext, argv: list[str], what: str, timeout: float = 60.0) -> None:
    result = await ctx.query(CommandQuery(argv=argv, timeout=timeout, max_bytes=100_000))
    if not result.ok:
        raise TaskFormatError([FormatProblem(SUITE, "config", f"{what}: {result.message}")])


def _setup_oracle(steps: list[ConfigStep]) -> Any:
    async def setup(ctx: OracleContext) -> AsyncIterator[Action]:
        for step in steps:
            p = step.parameters
            if step.type == "download":
                continue  # the files were written before the apps started
            if step.type in ("launch", "open"):
                before = {w["id"] for w in await _windows(ctx)}
                argv = _argv(p["command"]) if step.type == "launch" else _opener(guest_path(str(p["path"])))
                if argv and argv[0] == "socat":
                    continue  # OSWorld forwards Chrome's debugging port; the guest reads it directly
                await _run(ctx, _background(argv), f"starting {argv[0]}")
                await _wait_new_window(ctx, before)
            elif step.type in ("execute", "command"):
                await _run(ctx, _argv(p["command"]) if not p.get("shell") else ["sh", "-c", str(p["command"])],
                           f"running {p['command']!r}")
            elif step.type in ("activate_window", "close_window"):
                name = str(p["window_name"])
                flag = "--name" if not p.get("by_class") else "--class"
                verb = "windowactivate" if step.type == "activate_window" else "windowclose"
                await _run(ctx, ["sh", "-c", f"xdotool search {flag} {shlex.quote(name)} {verb}"],
                           f"{step.type} {name!r}")
            yield Wait(seconds=0)  # settle (OSWorld's fixed sleeps): the screen is still
    return setup


# --- judging ---

def _post_prefix(steps: list[ConfigStep]) -> str:
    """The postconfig steps as shell lines run right before a result is read."""
    lines = []
    for step in steps:
        p = step.parameters
        if step.type in ("execute", "command"):
            argv = _argv(p["command"])
            lines.append(" ".join(shlex.quote(a) for a in argv) + " >/dev/null 2>&1;")
        elif step.type in ("activate_window", "close_window"):
            verb = "windowactivate" if step.type == "activate_window" else "windowclose"
            lines.append(f"xdotool search --name {shlex.quote(str(p['window_name']))} {verb} >/dev/null 2>&1;")
        elif step.type in ("launch", "open"):
            argv = _argv(p["command"]) if step.type == "launch" else _opener(guest_path(str(p["path"])))
            lines.append(" ".join(_background(argv)[2:]) + ";")
        # sleep: the reading command runs after the agent stopped; nothing to wait for
    return " ".join(lines)


class OSWorldJudge:
    """The evaluator of one OSWorld task, over the state its getters read."""

    def __init__(self, task: OSWorldTask) -> None:
        self.task = task
        self.items = task.evaluator.items()
        self._post = _post_prefix(task.evaluator.postconfig)
        self._queries: list[list[StateQuery]] = [self._reads(result) for _, result, _, _ in self.items]

    def _reads(self, result: GetterSpec | None) -> list[StateQuery]:
        """The queries of a result getter. Postconfig commands run inside the reading
        command itself (the guest answers a list of queries in parallel, so a separate
        command would race the read): a file is then read by `base64` after them."""
        queries = queries_of(result)
        if not self._post or result is None or not queries:
            return queries
        if result.type == "vm_file":
            path = shlex.quote(guest_path(str(result.args["path"])))
            return [CommandQuery(argv=["sh", "-c", f"{self._post} base64 -w0 {path}"], timeout=60,
                                 max_bytes=10_000_000)]
        if isinstance(queries[0], CommandQuery):
            inner = " ".join(shlex.quote(a) for a in queries[0].argv)
            return [queries[0].model_copy(update={"argv": ["sh", "-c", f"{self._post} {inner}"]})]
        return [CommandQuery(argv=["sh", "-c", f"{self._post} true"], timeout=60), *queries]

    def _value(self, result: GetterSpec | None, answers: list[Any]) -> Any:
        if self._post and result is not None and result.type == "vm_file":
            out = answers[0]
            if not out.ok or out.value["returncode"] != 0:
                raise GetterError(f"reading {result.args['path']}: {out.message or out.value['stderr'].strip()}")
            return value_of(result, [out.model_copy(update={"value": out.value["stdout"].strip()})])
        if self._post and len(answers) > 1:
            answers = answers[1:]  # the postconfig command's own answer
        return value_of(result, answers)

    def queries(self) -> list[StateQuery]:
        seen, out = set(), []
        for group in self._queries:
            for q in group:
                if query_key(q) not in seen:
                    seen.add(query_key(q))
                    out.append(q)
        return out

    def evaluate(self, data: JudgeInput) -> Verdict:
        started = time.perf_counter()
        declared_infeasible = data.done is not None and data.done.status == "infeasible"
        if self.task.evaluator.func == "infeasible":
            ev = Evidence(check="the agent declares the task infeasible", getter="done",
                          observed=data.done.status if data.done else None, expected="infeasible",
                          passed=declared_infeasible)
            return Verdict(score=float(declared_infeasible), passed=declared_infeasible,
                           progress=float(declared_infeasible), evidence=[ev],
                           judge_ms=(time.perf_counter() - started) * 1000)
        evidence, scores = [], []
        for (func, result, expected, options), group in zip(self.items, self._queries):
            answers = [data.final.get(query_key(q)) for q in group]
            try:
                if any(a is None for a in answers):
                    raise GetterError("the runner did not read this getter's state")
                observed = self._value(result, answers)
                reference = value_of(expected, [])
                score = float(METRICS[func](observed, reference, **options))
                detail = ""
            except (GetterError, MetricError, KeyError, ValueError, OSError) as exc:
                observed, reference, score, detail = None, None, 0.0, f"{type(exc).__name__}: {exc}"
            scores.append(score)
            evidence.append(Evidence(check=func, getter=result.type if result else "none",
                                     observed=_brief(observed), expected=_brief(reference),
                                     passed=score >= 1.0, detail=detail))
        score = (min(scores) if self.task.evaluator.conj == "and" else max(scores)) if scores else 0.0
        if declared_infeasible:
            score = 0.0  # a feasible task given up on fails, whatever the files say
        return Verdict(score=score, passed=score >= 1.0,
                       progress=sum(s >= 1.0 for s in scores) / len(scores) if scores else 0.0,
                       evidence=evidence, judge_ms=(time.perf_counter() - started) * 1000)


def _brief(value: Any) -> Any:
    """Evidence keeps values, not whole trees or files: long text is cut."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return value if len(text) <= 2000 else text[:2000] + "..."


# --- templates ---

class OSWorldTemplate:
    """One OSWorld task file as a cua template (no seeded parameters: every seed is the same task)."""

    def __init__(self, task: OSWorldTask, file: str, *, kind: str = "vm", image: str = "office") -> None:
        self.task = task
        self.file = file
        self.id = f"{SUITE}.{task.id}@1"
        self.kind = kind
        self.image = image
        apps = task.related_apps or [task.snapshot]
        self.tags = TaskTags(app=apps[0] if apps else None, skills=list(task.related_apps), tier=3,
                             split="test", feasible=task.evaluator.func != "infeasible", oracle=False)
        self.unsupported = unsupported_names(task)

    @property
    def suite(self) -> str:
        return SUITE

    def __repr__(self) -> str:
        return f"<OSWorldTemplate {self.task.id} from {self.file}>"

    def sandbox_config(self) -> dict[str, Any]:
        binary: dict[str, str] = {}
        for step in self.task.config:
            if step.type == "download":
                for f in step.parameters.get("files", []):
                    binary[guest_path(str(f["path"]))] = base64.b64encode(cached_bytes(str(f["url"]))).decode()
        config: dict[str, Any] = {"apps": [], "binary_files": binary, "screen": {"width": 1280, "height": 720}}
        if self.kind == "vm":
            config.update(image=self.image, memory_mb=2048)
        return config

    def instantiate(self, seed: int) -> TaskInstance:
        if self.unsupported:
            raise TaskFormatError([FormatProblem(self.file, self.task.id, "unsupported by cua's OSWorld adapter: "
                                                 + ", ".join(self.unsupported))])
        try:
            config = self.sandbox_config()
        except GetterError as exc:
            raise TaskFormatError([FormatProblem(self.file, f"{self.task.id}.config.download", str(exc))]) from None
        steps = [s for s in self.task.config if s.type != "download"]
        return TaskInstance(task_id=self.id, seed=seed, instruction=self.task.instruction, sandbox_kind=self.kind,
                            sandbox_config=config, max_steps=50, params={"osworld_id": self.task.id},
                            tags=self.tags, judge=OSWorldJudge(self.task), oracle=None,
                            setup=TaskSetup(actions=_setup_oracle(steps) if steps else None))


def load_osworld(path: str | Path) -> tuple[list[OSWorldTemplate], list[FormatProblem]]:
    """Templates from one OSWorld task file or every `*.json` under a folder (recursive:
    `evaluation_examples/examples/<domain>/<id>.json`), and the problems found: files
    that do not parse, and tasks that need what this adapter lacks (they still load)."""
    path = Path(path).expanduser()
    files = sorted(path.rglob("*.json")) if path.is_dir() else [path]
    templates, problems = [], []
    for file in files:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
            task = OSWorldTask.model_validate(data)
        except (OSError, json.JSONDecodeError) as exc:
            problems.append(FormatProblem(str(file), "", f"not a readable JSON task file: {exc}"))
            continue
        except ValidationError as exc:
            first = exc.errors()[0]
            problems.append(FormatProblem(str(file), ".".join(str(x) for x in first["loc"]), first["msg"]))
            continue
        template = OSWorldTemplate(task, str(file))
        if template.unsupported:
            problems.append(FormatProblem(str(file), task.id, "unsupported: " + ", ".join(template.unsupported)))
        templates.append(template)
    return templates, problems

