"""Judge QA, `cua tasks check`: every template's judge attacked in real sandboxes.

The oracle must pass, doing nothing must fail, a near miss must fail, and the probes built
from the oracle's end state must each get the verdict they call for (`check` runs them all;
`judge_qa` the probes along and from the oracle; `probes` and `probe_*` build them;
`db_image` reads an app's database as rows; `qa_cache` reuses a clean verdict while
nothing it rests on changed). Its own room, apart from `cua eval`: it sits above the
episode layer, the tasks and the judges, and only the `cua tasks` command imports it.
"""
