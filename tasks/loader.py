"""Load task files: YAML -> validated `TemplateSpec`s -> `YamlTemplate`s.

Every problem in a file is reported as one `TaskFormatError` naming the file, the
field (a readable path such as `templates[2] (todo.rename@1).judge.checks[0].expect.op`)
and the reason, so a task author can fix a file without reading a traceback.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from cua.attack import DESKTOP_FILE, Attack, make_attack
from cua.judges.app_schema import AppSchema
from cua.judges.completeness import Tally, tally
from cua.launcher import LAUNCHER
from cua.task import TaskInstance, TaskSetup, TaskTags
from cua.tasks.format import FormatProblem, RowsParam, SandboxSpec, TaskFile, TaskFormatError, TemplateSpec
from cua.tasks.params import GenerationError, generate_params
from cua.tasks.render import RenderError, render

__all__ = ["FormatProblem", "TaskFormatError", "YamlTemplate", "app_schema", "judge_tally", "load_file", "load_text",
           "sandbox_config"]


def _field_path(loc: Iterable[Any], data: Any) -> str:
    """Turn a pydantic error location into a readable path over the file's data. A loc
    element that is not a key of the data at that point is a union branch label (skipped)
    unless it is the last one (a missing field)."""
    parts = list(loc)
    out = ""
    node = data
    for i, part in enumerate(parts):
        if isinstance(node, Mapping) and isinstance(part, str) and part in node:
            if i < len(parts) - 1 and not isinstance(node[part], (Mapping, list)):
                continue  # a branch tag named like its key (e.g. `check`), followed by the field
            out = f"{out}.{part}" if out else part
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            out += f"[{part}]"
            node = node[part]
            if out == f"templates[{part}]" and isinstance(node, Mapping) and "id" in node:
                out += f" ({node['id']})"
        elif i == len(parts) - 1 and isinstance(part, str) and isinstance(node, Mapping):
            out = f"{out}.{part}" if out else part
    return out


def _problems(exc: ValidationError, file: str, data: Any) -> list[FormatProblem]:
    out: list[FormatProblem] = []
    seen: set[tuple[str, str]] = set()
    for err in exc.errors(include_url=False):
        field = _field_path(err["loc"], data)
        reason = err["msg"]
        if err["type"] == "extra_forbidden":
            reason = "unknown field"
        key = (field, reason)
        if key not in seen:
            seen.add(key)
            out.append(FormatProblem(file, field, reason))
    return out


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        merged = dict(base)
        for key, value in over.items():
            merged[key] = _merge(base[key], value) if key in base else copy.deepcopy(value)
        return merged
    return copy.deepcopy(over)


def load_text(text: str, file: str = "<string>", *, suite: str | None = None) -> list["YamlTemplate"]:
    """Parse and validate one task file's text; `suite` (the folder name) is checked
    against the file's `suite:` and every template id's prefix."""
    try:
        # libyaml's loader where PyYAML was built with it: the same documents, 10x faster
        # (the bundled suites: 0.5 s against 5 s, paid by every process that lists tasks).
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise TaskFormatError([FormatProblem(file, where, f"not valid YAML: {exc.problem or exc}")]) from None
    except yaml.YAMLError as exc:
        raise TaskFormatError([FormatProblem(file, "", f"not valid YAML: {exc}")]) from None
    if not isinstance(data, dict):
        raise TaskFormatError([FormatProblem(file, "", "a task file is a mapping with a `templates:` list")])
    defaults = data.get("defaults") or {}
    suite_wide = _suite_wide_allowances(defaults)
    if suite_wide:
        raise TaskFormatError([FormatProblem(file, f"defaults.judge.{key}", "suite-wide allowances are refused: "
                                             "each template allows (and reads, or declares unjudged) its own changes")
                               for key in suite_wide])
    raw_templates = data.get("templates")
    if isinstance(defaults, dict) and isinstance(raw_templates, list):
        data = {**data, "templates": [_merge(defaults, t) if isinstance(t, dict) else t for t in raw_templates]}
    try:
        parsed = TaskFile.model_validate(data)
    except ValidationError as exc:
        raise TaskFormatError(_problems(exc, file, data)) from None
    problems: list[FormatProblem] = []
    suite_name = parsed.suite or suite
    if parsed.suite and suite and parsed.suite != suite:
        problems.append(FormatProblem(file, "suite", f"the file says suite {parsed.suite!r} but lies in suite folder {suite!r}"))
    seen: set[str] = set()
    for i, spec in enumerate(parsed.templates):
        where = f"templates[{i}] ({spec.id}).id"
        if suite_name and spec.id.split(".", 1)[0] != suite_name:
            problems.append(FormatProblem(file, where, f"the id must start with the suite name {suite_name!r}"))
        if spec.id in seen:
            problems.append(FormatProblem(file, where, "duplicate template id"))
        seen.add(spec.id)
        problems += _static_checks(spec, file, f"templates[{i}] ({spec.id})")
    if problems:
        raise TaskFormatError(problems)
    return [YamlTemplate(spec, data["templates"][i], file) for i, spec in enumerate(parsed.templates)]


#: The parts of a judge that allow changes: a file's `defaults` may not set them for all its templates.
_ALLOWANCES = ("expected_changes", "incidental_changes", "free_fields", "expected_files", "unjudged")


def _suite_wide_allowances(defaults: Any) -> list[str]:
    judge = defaults.get("judge") if isinstance(defaults, dict) else None
    return [key for key in _ALLOWANCES if isinstance(judge, dict) and key in judge]


@cache
def app_schema(name: str) -> AppSchema:
    """Bundled app `name`'s schema as the completeness rule reads it, built once per process
    from its class (an empty database; the app is not seeded)."""
    app_class = importlib.import_module(f"cua.tasks.apps.{name}").APP
    return AppSchema.of(app_class.schema_db(), app_class.assigned, app_class.derived, app_class.records,
                        app_class.state_keys)


def judge_tally(spec: TemplateSpec) -> Tally:
    """How the template's allowances are accounted for: read by a check, or declared unjudged
    (`cua.judges.completeness`); its `gaps` are the ones neither."""
    from cua.tasks.apps import app_names

    app = spec.sandbox.app
    out = tally(spec.judge, app_schema(app) if app and app in app_names() else None)
    for name, sub in spec.judge.apps.items():  # a workflow's other apps, read by the same checks
        there = tally(sub, app_schema(name) if name in app_names() else None, spec.judge.checks)
        out.allowances, out.read, out.unjudged = (out.allowances + there.allowances, out.read + there.read,
                                                  out.unjudged + there.unjudged)
        out.gaps += [replace(g, field=f"judge.apps.{name}: {g.field}") for g in there.gaps]
    return out


def _completeness(spec: TemplateSpec, file: str, where: str) -> list[FormatProblem]:
    return [FormatProblem(file, f"{where}.{gap.field}", gap.reason) for gap in judge_tally(spec).gaps]


def _static_checks(spec: TemplateSpec, file: str, where: str) -> list[FormatProblem]:
    out: list[FormatProblem] = _completeness(spec, file, where)
    if spec.sandbox.app and spec.sandbox.kind not in ("browser", "mobile"):
        out.append(FormatProblem(file, f"{where}.sandbox.app", "an app shortcut needs kind: browser or mobile"))
    if spec.sandbox.apps and (spec.sandbox.kind not in ("mobile", "browser") or not spec.sandbox.app):
        out.append(FormatProblem(file, f"{where}.sandbox.apps", "more apps beside the task's are for kind: browser "
                                 "or mobile, beside sandbox.app"))
    if len({spec.sandbox.app, *spec.sandbox.apps}) != 1 + len(spec.sandbox.apps):
        out.append(FormatProblem(file, f"{where}.sandbox.apps", "each app runs once: sandbox.apps repeats an app"))
    for name in sorted(set(spec.judge.apps) - set(spec.sandbox.apps)):
        out.append(FormatProblem(file, f"{where}.judge.apps.{name}", f"{name!r} is not among sandbox.apps"))
    if spec.sandbox.kind == "mobile" and (spec.sandbox.start_url or spec.setup.start_url):
        out.append(FormatProblem(file, f"{where}.sandbox.start_url", "a phone starts on its shell; "
                                 "name the app open at the start with sandbox.config.start_app"))
    if spec.setup.files and spec.sandbox.kind == "browser":
        out.append(FormatProblem(file, f"{where}.setup.files", "files are for desktop and vm sandboxes"))
    if spec.judge.side_effects and not spec.sandbox.app and "services" not in spec.sandbox.config:
        out.append(FormatProblem(file, f"{where}.judge.side_effects", "side effects are diffed on an app's state; "
                                 "this sandbox runs no app"))
    if not spec.judge.checks and spec.tags.feasible:
        out.append(FormatProblem(file, f"{where}.judge.checks", "a feasible task needs at least one check"))
    if (spec.oracle is None) == spec.tags.oracle:
        out.append(FormatProblem(file, f"{where}.oracle", "a template without an oracle says so with tags.oracle: false"
                                 if spec.oracle is None else "tags.oracle: false, but the template has an oracle"))
    from cua.tasks.kinds import unsupported_fields

    out += [FormatProblem(file, f"{where}.{field}", reason) for field, reason in unsupported_fields(spec)]
    from cua.tasks.apps import app_names, own_server

    apps = ({spec.sandbox.app, *spec.sandbox.apps}
            | {p.app for p in spec.params.values() if isinstance(p, RowsParam) and p.app})
    for app in sorted(a for a in apps if a):
        if app not in app_names():
            out.append(FormatProblem(file, f"{where}.sandbox.app", f"unknown app {app!r}; bundled: {', '.join(app_names())}"))
    if spec.tags.fidelity == "real" and not (spec.sandbox.app and own_server(spec.sandbox.app)):
        what = f"app {spec.sandbox.app!r} is not one" if spec.sandbox.app else "the sandbox runs no app"
        out.append(FormatProblem(file, f"{where}.tags.fidelity", f"fidelity: real is for a real product's template "
                                 f"(sandbox.app names one, e.g. mediawiki); {what}"))
    return out


def load_file(path: str | Path, *, suite: str | None = None) -> list["YamlTemplate"]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TaskFormatError([FormatProblem(str(path), "", f"cannot read: {exc.strerror or exc}")]) from None
    return load_text(text, str(path), suite=suite)


def sandbox_config(spec: SandboxSpec, start_url: str | None) -> dict[str, Any]:
    """The sandbox kind's config dict: the `app` shortcut becomes the service `app`."""
    config: dict[str, Any] = copy.deepcopy(spec.config)
    if spec.app:
        from cua.tasks.apps import service as app_service

        service = app_service(spec.app)
        config["services"] = [service, *[s for s in config.get("services", []) if s.get("name") != "app"]]
    if spec.kind in ("mobile", "browser") and spec.apps:
        from cua.tasks.apps import service as app_service

        config["services"] = [*config.get("services", []), *[app_service(a, a) for a in spec.apps]]
    if spec.kind == "browser" and spec.apps and spec.start_url is None and start_url is None:
        config["start_url"] = LAUNCHER  # the apps page: a link to each app's origin
    if spec.kind == "browser" and spec.apps and spec.app:
        config["launcher_names"] = {"app": spec.app, **config.get("launcher_names", {})}
    if spec.kind == "mobile":
        if spec.app:  # the icon shows the app's name, not its service's
            config["labels"] = {"app": spec.app.replace("_", " ").title(), **config.get("labels", {})}
    url = start_url or spec.start_url
    if url is not None:
        config["start_url"] = url
    if spec.viewport is not None:
        config["viewport"] = spec.viewport.model_dump()
    if spec.isolation is not None:
        config["isolation"] = spec.isolation
    return config


def _attach_query_rules(node: Any, rules: Mapping[str, Any], app: str) -> str | None:
    """Give every `url` check under `node` the app's declared query parameters (the judge
    reads nothing but its spec, so the app's rules travel in it); a check that lists
    `defaults` by hand on an app that declares them is refused (they would drift apart)."""
    if isinstance(node, list):
        return next((p for p in (_attach_query_rules(n, rules, app) for n in node) if p), None)
    if not isinstance(node, dict):
        return None
    if node.get("op") == "url" and rules:
        if node.get("defaults"):
            return f"a url check lists `defaults`, but app {app!r} declares its query parameters (WebApp.query_params)"
        node.setdefault("query_rules", dict(rules))
    return next((p for p in (_attach_query_rules(v, rules, app) for v in node.values()) if p), None)


def _attack_params(attacks: list[Attack]) -> dict[str, Any]:
    """The first planted attack's markers as the template's `{attack.*}` parameters."""
    if not attacks:
        return {}
    return {"attack": {**attacks[0].model_dump(mode="json"), "host": attacks[0].host}}


class YamlTemplate:
    """A validated template from a task file; `instantiate(seed)` is deterministic."""

    def __init__(self, spec: TemplateSpec, raw: dict[str, Any], file: str) -> None:
        self.spec = spec
        self.raw = raw
        self.file = file
        self.id: str = spec.id
        self.tags: TaskTags = TaskTags.model_validate(spec.tags.model_dump())

    @property
    def suite(self) -> str:
        return self.id.split(".", 1)[0]

    def __repr__(self) -> str:
        return f"<YamlTemplate {self.id} from {self.file}>"

    def params(self, seed: int) -> dict[str, Any]:
        app_seed = self.spec.setup.app_seed if self.spec.setup.app_seed is not None else seed
        return {**generate_params(self.spec, seed, app_seed), **_attack_params(self.attacks(seed))}

    def attacks(self, seed: int) -> list[Attack]:
        """The template's planted attacks at `seed` (`setup.attacks`), markers seeded."""
        app = self.spec.sandbox.app or ("desktop" if self.spec.sandbox.kind == "desktop" else "")
        return [make_attack(app, a.place, a.style, a.goal, seed=seed, index=i)
                for i, a in enumerate(self.spec.setup.attacks)]

    def instantiate(self, seed: int) -> TaskInstance:
        from cua.judges.judge import StateJudge
        from cua.judges.spec import JudgeSpec
        from cua.tasks.oracle import build_oracle

        app_seed = self.spec.setup.app_seed if self.spec.setup.app_seed is not None else seed
        where = f"{self.id} at seed {seed}"
        try:
            attacks = self.attacks(seed)
            params = {**generate_params(self.spec, seed, app_seed), **_attack_params(attacks)}
            rendered = render({k: v for k, v in self.raw.items() if k not in ("params", "derived", "generator")},
                              params)
        except (GenerationError, RenderError) as exc:
            raise TaskFormatError([FormatProblem(self.file, where, str(exc))]) from None
        if spec_app := self.spec.sandbox.app:
            from cua.tasks.apps import query_rules

            problem = _attach_query_rules(rendered.get("judge"), query_rules(spec_app), spec_app)
            if problem:
                raise TaskFormatError([FormatProblem(self.file, where, problem)])
        try:
            spec = TemplateSpec.model_validate({**rendered, "params": self.raw.get("params", {}),
                                                "derived": self.raw.get("derived", {}),
                                                "generator": self.raw.get("generator")})
        except ValidationError as exc:
            problems = _problems(exc, self.file, rendered)
            raise TaskFormatError([FormatProblem(p.file, f"{where}: {p.field}", p.reason) for p in problems]) from None
        has_app = bool(spec.sandbox.app) or bool(spec.sandbox.config.get("services"))
        judge_spec = spec.judge
        if spec.sandbox.kind in ("browser", "mobile") and spec.sandbox.apps:  # each other app: only what its entry allows
            judge_spec = judge_spec.model_copy(update={"apps": {
                a: spec.judge.apps.get(a) or JudgeSpec(service=a) for a in spec.sandbox.apps}})
        judge = StateJudge(judge_spec, side_effects=has_app if spec.judge.side_effects is None else spec.judge.side_effects,
                           feasible=spec.tags.feasible)
        try:
            oracle = build_oracle(spec.oracle, params) if spec.oracle is not None else None
            near_miss = build_oracle(spec.near_miss, params) if spec.near_miss is not None else None
            setup_actions = build_oracle(spec.setup.actions, params) if spec.setup.actions else None
        except GenerationError as exc:  # a python oracle that does not import
            raise TaskFormatError([FormatProblem(self.file, where, str(exc))]) from None
        config = sandbox_config(spec.sandbox, spec.setup.start_url)
        if spec.setup.files:  # desktop and VM sandboxes seed files into their home at reset
            config["files"] = {**config.get("files", {}), **spec.setup.files}
        planted_files = [a for a in attacks if a.place == "desktop.file"]
        if planted_files:  # a desktop's injection is a file in its home, seeded at reset like the task's own
            config["files"] = {**config.get("files", {}), DESKTOP_FILE: planted_files[0].text}
        return TaskInstance(
            task_id=spec.id,
            seed=seed,
            instruction=str(spec.instruction),
            sandbox_kind=spec.sandbox.kind,
            sandbox_config=config,
            max_steps=spec.max_steps,
            params=params,
            tags=self.tags,
            judge=judge,
            oracle=oracle,
            near_miss=near_miss,
            setup=TaskSetup(seed=app_seed, files=dict(spec.setup.files), actions=setup_actions,
                            instruction_query=spec.setup.instruction_query, end_query=spec.setup.end_query),
            attacks=attacks,
        )
