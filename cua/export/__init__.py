"""From trajectories to training data.

- `select`: which trajectories (verdict, app, tier, split, producer, task filters)
- `rows`: step and episode rows (AgentNet/OpenCUA style: pixels and normalised points)
- `tables`: JSONL, Parquet (Hugging Face features in the schema) and a hub-ready folder
- `sft`: each model family's SFT layout, prompts built by the policy server's own code
- `prm`: step-level cases with a correct and a plausible wrong action at one state
- `export`: the whole export, with DIR/export.json saying how it was made

Reads `cua.trajectory` only (and `cua.policy` for SFT rendering); never eval, rl or record.
"""

from cua.export.export import ExportFormat, ExportOutputError, ExportSummary, export
from cua.export.select import ExportSourceError, Selection, select

__all__ = ["ExportFormat", "ExportOutputError", "ExportSourceError", "ExportSummary", "Selection", "export",
           "select"]
