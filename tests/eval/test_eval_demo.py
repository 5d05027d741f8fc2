"""`cua eval --demo TRAJ_DIR|auto` (issue 35, item 6): the agent is given a recorded
trajectory of a similar task (instruction, actions, three downscaled frames) in its policy's
context, and the same instances run without it too, the summary comparing the two arms.
On the fake kind (in process, milliseconds) with a task whose seeds differ only in a
reference number, so one seed's solution solves another: `scripted:@demo` replays the demo
its options carry and passes, the same policy without a demo fails; an OpenAI-compatible
policy gets the demo in its prompt. `auto` never hands a task its own instance (no leakage),
and a fixed demo of it is refused."""

from __future__ import annotations

import asyncio
import base64
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from _eval_common import report_cards
from _model_server import DONE, MODEL, ModelServer
from PIL import Image

from cua.actions import Click
from cua.cli import main
from cua.eval.runner import read_records
from cua.observation import Observation, Screenshot, Size
from cua.policy.demo import DEMO_INTRO, Demo, DemoFrame, DemoStep
from cua.policy.engine import build_prompt
from cua.policy.families import get_family
from cua.tasks.loader import load_file

TASK = "demoish.subscribe@1"
SUITE = {
    "suite": "demoish",
    "defaults": {"sandbox": {"kind": "fake", "viewport": {"width": 640, "height": 400}}, "tags": {"app": "fake"}},
    "templates": [{
        "id": TASK,
        "instruction": 'Type "Ada Lovelace" into the Name field, tick Subscribe, and submit the form (request {ref}).',
        "params": {"ref": {"type": "choice", "values": [f"R-{n}" for n in range(100, 140)]}},
        "judge": {"checks": [{"check": "one submission, with the name and the subscription",
                              "get": {"kind": "app_state", "path": "submissions"},
                              "expect": {"op": "table", "rows": [{"name": "Ada Lovelace", "subscribe": True}],
                                         "columns": ["name", "subscribe"]}}]},
        "oracle": [{"fill": {"selector": "#name", "text": "Ada Lovelace"}}, {"click": "#subscribe"},
                   {"click": "#submit"}],
        "max_steps": 10,
        "tags": {"split": "train"},
    }],
}


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    path = tmp_path / "demoish.yaml"
    path.write_text(yaml.safe_dump(SUITE, sort_keys=False))
    return path


def _seeds(suite: Path) -> tuple[int, int]:
    """Two seeds whose instances differ (their instructions name other requests)."""
    (template,) = load_file(suite, suite="demoish")
    first = template.instantiate(0).instruction
    other = next(s for s in range(1, 50) if template.instantiate(s).instruction != first)
    return 0, other


def source_of(record: object) -> dict[str, object]:
    source = record.demo.source  # type: ignore[attr-defined]
    assert isinstance(source, dict)
    return source


def _eval(*args: str) -> int:
    return main(["eval", *args, "--local", "--no-progress", "--no-report"])


@pytest.fixture
def demo_run(suite: Path, tmp_path: Path) -> Path:
    """An oracle run of the task at its first seed: the run demos are taken from."""
    out = tmp_path / "demos"
    assert _eval(str(suite), "--policy", "oracle", "--seed-list", str(_seeds(suite)[0]), "--out", str(out)) == 0
    return out


def test_a_demo_replayed_from_the_policy_context_passes_and_the_same_policy_without_fails(
        suite: Path, demo_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, other = _seeds(suite)
    out = tmp_path / "run"
    assert _eval(str(suite), "--policy", "scripted:@demo", "--seed-list", str(other), "--demo", "auto",
                 "--demo-from", str(demo_run), "--out", str(out)) == 0
    printed = capsys.readouterr().out
    records = list(read_records(out / "episodes.jsonl"))
    by_arm = {r.demo.arm: r for r in records if r.demo is not None}  # type: ignore[attr-defined]
    assert len(records) == 2 and set(by_arm) == {"demo", "none"}
    with_demo, without = by_arm["demo"], by_arm["none"]
    assert (with_demo.task_id, with_demo.seed) == (without.task_id, without.seed) == (TASK, other)
    demo_steps = len((Path(str(source_of(with_demo)["trajectory"])) / "steps.jsonl").read_text().splitlines())
    assert with_demo.verdict is not None and with_demo.verdict.passed and with_demo.steps == demo_steps
    assert without.verdict is not None and without.steps == 1 and without.done == {"type": "done", "status": "failure",
                                                                                 "answer": None}
    assert without.verdict is not None and not without.verdict.passed
    source = with_demo.demo.source  # type: ignore[attr-defined]
    assert source is not None and (source["task_id"], source["seed"]) == (TASK, first)
    assert without.demo.source is None  # type: ignore[attr-defined]
    summary = json.loads((out / "summary.json").read_text())["demo"]
    assert summary["with_demo"]["success_rate"] == 1.0 and summary["without_demo"]["success_rate"] == 0.0
    assert summary["success_gain"] == 1.0 and summary["with_demo"]["mean_steps"] == demo_steps
    assert summary["by_task"][TASK]["with_demo"]["passed"] == 1
    assert "demo success=1.000 without=0.000 gain=1.000" in printed
    # the demo arm's trajectory names where its demo came from, without its frames
    meta = json.loads((out / with_demo.trajectory / "meta.json").read_text())  # type: ignore[operator]
    assert meta["agent"]["settings"]["demo"]["seed"] == first and '"data"' not in json.dumps(meta["agent"])


def test_auto_never_gives_a_task_its_own_instance(suite: Path, demo_run: Path, tmp_path: Path) -> None:
    first, _ = _seeds(suite)
    out = tmp_path / "run"
    # the only passing trajectory of the template is of this very instance: no demo, not that one
    assert _eval(str(suite), "--policy", "scripted:@demo", "--seed-list", str(first), "--demo", "auto",
                 "--demo-from", str(demo_run), "--out", str(out)) == 0
    with_demo = next(r for r in read_records(out / "episodes.jsonl") if r.demo.arm == "demo")  # type: ignore[attr-defined]
    assert with_demo.demo.source is None and not with_demo.verdict.passed  # type: ignore[attr-defined,union-attr]
    summary = json.loads((out / "summary.json").read_text())["demo"]
    assert summary["with_demo"]["no_demo_found"] == 1


def test_a_demo_of_the_same_instance_is_refused(suite: Path, demo_run: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    first, _ = _seeds(suite)
    (folder,) = (demo_run / "trajectories").iterdir()
    out = tmp_path / "run"
    assert _eval(str(suite), "--policy", "scripted:@demo", "--seed-list", str(first), "--demo", str(folder),
                 "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert f"records the task's own instance ({TASK}@{first})" in err and "Traceback" not in err
    assert not out.exists()  # refused before anything ran


@pytest.mark.parametrize(("args", "says"), [
    (["--demo", "{tmp}/nowhere"], "no such folder"),
    (["--demo", "{tmp}"], "not a finished trajectory"),
    (["--demo", "auto"], "--demo auto needs --demo-from"),
    (["--demo", "auto", "--demo-from", "{tmp}"], "no passing trajectory"),
    (["--demo-from", "{tmp}"], "give --demo auto too"),
    (["--demo", "auto", "--demo-from", "{tmp}", "--policy", "oracle"], "does not combine with --policy oracle"),
])
def test_bad_demo_input_gets_a_typed_error(suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           args: list[str], says: str) -> None:
    filled = [a.replace("{tmp}", str(tmp_path)) for a in args]
    policy = [] if "--policy" in filled else ["--policy", "scripted:@demo"]
    assert _eval(str(suite), *policy, *filled, "--out", str(tmp_path / "run")) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


@pytest.fixture
def model() -> Iterator[ModelServer]:
    server = ModelServer()
    yield server
    server.close()


def _images(call: dict[str, object]) -> int:
    return json.dumps(call).count('"type": "image_url"')


def test_an_openai_compatible_policy_gets_the_demo_in_its_prompt(suite: Path, demo_run: Path, tmp_path: Path,
                                                                 model: ModelServer) -> None:
    _, other = _seeds(suite)
    model.then = DONE
    out = tmp_path / "run"
    assert _eval(str(suite), "--policy", f"openai:{MODEL}@{model.url}", "--family", "qwen2.5-vl",
                 "--seed-list", str(other), "--demo", "auto", "--demo-from", str(demo_run), "--out", str(out)) == 0
    with_demo = [c for c in model.calls if DEMO_INTRO in json.dumps(c)]
    without = [c for c in model.calls if DEMO_INTRO not in json.dumps(c)]
    assert len(with_demo) == 1 and len(without) == 1  # one turn (Done) per arm
    text = json.dumps(with_demo[0])
    assert "Ada Lovelace" in text and "Step 2:" in text and "(request R-" in text
    assert _images(with_demo[0]) == _images(without[0]) + 3  # first, middle and last frames of the demo


def _frame(step: int, width: int = 320, height: int = 200) -> DemoFrame:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (step * 40, 90, 200)).save(buffer, "JPEG")
    return DemoFrame(step=step, data=base64.b64encode(buffer.getvalue()).decode(), size=Size(width=width, height=height))


def test_the_prompt_builder_puts_the_demo_after_the_system_text_in_the_model_coordinates() -> None:
    family = get_family("qwen2.5-vl")
    frame = Size(width=640, height=400)
    demo = Demo(instruction="Tick the box.", steps=[DemoStep(action={"type": "click", "x": 320, "y": 200}, frame=frame),
                                                    DemoStep(action={"type": "done"}, frame=frame)],
                frames=[_frame(0), _frame(1), _frame(2)])
    shot = io.BytesIO()
    Image.new("RGB", (640, 400)).save(shot, "PNG")
    obs = Observation(sandbox_id="sb", frame=frame, screen=frame,
                      screenshot=Screenshot(format="png", width=640, height=400, data=shot.getvalue()))
    plain = build_prompt(family, "Tick the other box.", [], obs, 3)
    shown = build_prompt(family, "Tick the other box.", [], obs, 3, demo=demo)
    assert shown.messages[0] == plain.messages[0] and plain.messages[0]["role"] == "system"
    user, ack = shown.messages[1], shown.messages[2]
    assert (user["role"], ack["role"]) == ("user", "assistant") and shown.messages[3:] == plain.messages[1:]
    texts = [part["text"] for part in user["content"] if part["type"] == "text"]
    assert texts[0] == f"{DEMO_INTRO}\nTick the box."
    assert sum(part["type"] == "image" for part in user["content"]) == 3
    click = next(t for t in texts if t.startswith("Step 1:"))
    assert family.render([Click(x=320, y=200)], frame, approximate=True) in click


@pytest.mark.slow  # torch: a tiny Qwen2.5-VL built offline, loaded and run on CPU
def test_a_transformers_policy_gets_the_demo_in_its_prompt(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="the transformers backend needs torch")
    from cua.policy.backends.transformers import TransformersBackend
    from cua.policy.base import PolicyOptions
    from cua.policy.engine import ModelPolicy
    from cua.policy.tiny import build_tiny_qwen25_vl

    build_tiny_qwen25_vl(tmp_path / "tiny")
    frame = Size(width=112, height=112)
    shot = io.BytesIO()
    Image.new("RGB", (112, 112), "white").save(shot, "PNG")
    obs = Observation(sandbox_id="sb", frame=frame, screen=frame,
                      screenshot=Screenshot(format="png", width=112, height=112, data=shot.getvalue()))
    demo = Demo(instruction="Tick the box labelled Zebra.",
                steps=[DemoStep(action={"type": "click", "x": 56, "y": 56}, frame=frame)],
                frames=[_frame(0, 112, 112), _frame(1, 112, 112)])

    async def prompts() -> tuple[str, str, int, int]:
        backend = TransformersBackend(str(tmp_path / "tiny"), max_new_tokens=2, dtype="float32")
        policy = ModelPolicy(backend, family="qwen2.5-vl")
        plain = await policy.act("a", "Tick the box labelled Yak.", obs)
        shown = await policy.act("b", "Tick the box labelled Yak.", obs, PolicyOptions(demo=demo))
        pad = backend.tokenizer.convert_tokens_to_ids("<|image_pad|>")
        assert plain.prompt_token_ids is not None and shown.prompt_token_ids is not None
        texts = (backend.tokenizer.decode(plain.prompt_token_ids), backend.tokenizer.decode(shown.prompt_token_ids))
        counts = (plain.prompt_token_ids.count(pad), shown.prompt_token_ids.count(pad))
        await policy.aclose()
        return texts[0], texts[1], counts[0], counts[1]

    plain, shown, plain_pads, shown_pads = asyncio.run(prompts())
    assert "Zebra" in shown and DEMO_INTRO in shown and "Zebra" not in plain
    assert shown.index("Zebra") < shown.index("Yak")  # the demo comes before the task
    assert shown_pads == 3 * plain_pads  # the demo's two frames, each the size of the screenshot


@pytest.mark.slow
def test_the_report_shows_both_arms_and_the_gain(suite: Path, demo_run: Path, tmp_path: Path) -> None:
    """What a person sees: the HTML report's cards, in a real Chromium."""
    out = tmp_path / "run"
    assert _eval(str(suite), "--policy", "scripted:@demo", "--seed-list", str(_seeds(suite)[1]), "--demo", "auto",
                 "--demo-from", str(demo_run), "--out", str(out)) == 0
    cards = {"success with demo": "100.0%", "success without demo": "0.0%", "demo gain": "+100.0 pt"}
    assert report_cards(out, cards) == cards
