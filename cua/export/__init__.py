"""From trajectories to training data.

- `select`: which trajectories (verdict, app, tier, split, producer, task filters)
- `rows`: step and episode rows (AgentNet/OpenCUA style: pixels and normalised points)
- `tables`: JSONL, Parquet (Hugging Face features in the schema) and a hub-ready folder
- `sft`: each model family's SFT layout, prompts built by the policy server's own code
- `prm`: step-level cases with a correct and a plausible wrong action at one state
- `transitions`: world-model rows (frame t, action, frame t+1, tree and judge-state diffs)
- `diffs`: the accessibility-tree and judge-state diffs of a step
- `execute`: a trajectory executed again on its task, each frame checked (`--execute`)
- `prm_execute`: PRM perturbations performed at their step's state
- `export`: the whole export, with DIR/export.json saying how it was made

Reads `cua.trajectory` (and `cua.policy` for SFT rendering); `--execute` drives sandboxes
through the episode layer; never eval, rl, record or replay.
"""

from cua.export.export import ExportFormat, ExportOutputError, ExportSummary, export
from cua.export.select import ExportSourceError, Selection, select

__all__ = ["ExportFormat", "ExportOutputError", "ExportSourceError", "ExportSummary", "Selection", "export",
           "select"]
