"""The run report: `cua report RUN` writes one static folder (HTML, script, data) that opens
from `file://` with no server and no network; `--serve` keeps it current while a run goes on.

It reads only what a run folder holds (the trajectory format, `episodes.jsonl`,
`summary.json`, `manifest.json`), never the code that produced it.
"""

from cua.report.build import ReportBuilder, build_report
from cua.report.data import RunData, compare_runs, load_run

__all__ = ["ReportBuilder", "RunData", "build_report", "compare_runs", "load_run"]
