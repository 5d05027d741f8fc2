"""A proposing model: an OpenAI-compatible chat model asked for templates in the task format.

`cua tasks synth --model openai:NAME@URL` sends the app's start page (a screenshot, an image
part), its schema and examples (generated templates) through the policy's chat backend (`cua.policy.backends.openai`, the client
`cua eval --policy openai:...` uses) and parses the ```yaml blocks of each answer into
candidates, which are admitted like generated ones (`cua.synth.admit`). A proposal is
untrusted: its ids are rewritten into the suite, and its oracle and near miss may only act
through the UI (`cua.synth.ui_only`): no python oracle, no `goto` but a path on the app's own
origin, so no oracle writes the state through a forged request (`javascript:`, `data:`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

import yaml

from cua.observation import Screenshot, Size
from cua.policy.families.base import PreparedImage
from cua.synth.admit import Candidate, suite_text

__all__ = ["ask", "parse_answer", "prompt", "propose"]

_BLOCK = re.compile(r"```(?:ya?ml)?[ \t]*\n(.*?)```", re.S)


def prompt(app: str, schema: str, examples: Sequence[dict[str, Any]], suite: str,
           image: Screenshot | None = None) -> list[dict[str, Any]]:
    """The chat messages: the app's start page as an image (when given), the task format by example,
    the app's tables, what to answer."""
    text = (f"You write tasks for a computer-use agent in the web app {app!r}"
            f"{' (its start page is the image above)' if image is not None else ''}. Its SQLite schema:\n{schema}\n"
            f"Task templates in this format (YAML), each with seeded params, a judge of typed checks and exact "
            f"expected_changes, an oracle that acts through the UI (select by data- attributes) and a near miss "
            f"that must fail:\n```yaml\n{suite_text(suite, list(examples))}```\n"
            "Propose new templates: answer with one ```yaml block holding a list of templates.")
    parts: list[dict[str, Any]] = []
    if image is not None:
        parts.append({"type": "image", "image": PreparedImage(Size(width=image.width, height=image.height), image.data,
                                                               image.format)})
    return [{"role": "user", "content": [*parts, {"type": "text", "text": text}]}]


def parse_answer(text: str, source: str, suite: str) -> list[Candidate]:
    """Every template of the answer's yaml blocks as a candidate (ids rewritten into `suite`);
    a block that is no list of mappings becomes one candidate that will not load."""
    out: list[Candidate] = []
    for block in _BLOCK.findall(text) or [text]:
        try:
            data = yaml.safe_load(block)
        except yaml.YAMLError as exc:
            data = [{"unparsed": f"not valid YAML: {exc}"}]
        if isinstance(data, dict):
            data = data.get("templates", [data])
        for item in data if isinstance(data, list) else [{"unparsed": repr(data)[:200]}]:
            template = dict(item) if isinstance(item, dict) else {"unparsed": repr(item)[:200]}
            body = {k: v for k, v in template.items() if k != "id"}
            digest = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:8]
            template = {"id": f"{suite}.proposed_{digest}@1", **body}
            out.append(Candidate(source, template))
    return out


async def ask(spec: str, messages: list[dict[str, Any]], *, temperature: float = 0.7, seed: int = 0) -> str:
    """One answer of the model `openai:NAME@URL`."""
    from cua.policy.backends.openai import OpenAIBackend
    from cua.policy.engine import CompletionRequest

    kind, _, rest = spec.partition(":")
    model, at, base_url = rest.partition("@")
    if kind != "openai" or not model or not at or not base_url:
        raise ValueError(f"bad model spec {spec!r}: expected openai:NAME@BASE_URL")
    backend = OpenAIBackend(base_url=base_url, model=model, max_retries=2)
    try:
        completion = await backend.complete(messages, CompletionRequest(temperature=temperature, seed=seed,
                                                                         max_tokens=4096))
    finally:
        await backend.aclose()
    return completion.text


def propose(spec: str, *, app: str, schema: str, examples: Sequence[dict[str, Any]], suite: str, rounds: int = 1,
            seed: int = 0, image: Screenshot | None = None) -> list[Candidate]:
    """`rounds` answers of the model, parsed into candidates (round r asks with seed+r)."""
    messages = prompt(app, schema, examples, suite, image)
    source = f"model:{spec.partition(':')[2].partition('@')[0]}"
    out: list[Candidate] = []
    for r in range(rounds):
        out += parse_answer(asyncio.run(ask(spec, messages, seed=seed + r)), source, suite)
    return out
