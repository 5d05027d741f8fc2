"""The episode layer: one way to drive a sandbox and one way to run an episode.

`cua.eval`, `cua.rl` and `cua.record` drive sandboxes and run episodes only through this
package, so they cannot disagree about reset seeds, setup steps, the judge's initial
state, or what a trajectory keeps.

- `handle`: `SandboxHandle`, the one interface of a sandbox (local and remote alike)
- `local`: `LocalSandbox`, `open_local` (sandboxes in this process)
- `openers`: `sandbox_opener` (in process, a given server, or a child `cua serve`)
- `agent`: `AgentTurn`, `EpisodeAgent`, `EpisodeContext` and the built-in agents
- `episode`: `Episode` (reset -> steps -> judge), `run_episode`, `EpisodeRecord`
"""

from cua.episode.agent import (
    AgentTurn,
    EpisodeAgent,
    EpisodeContext,
    NoopAgent,
    OracleAgent,
    RandomAgent,
    agent_info,
)
from cua.episode.episode import Episode, EpisodeRecord, StepRecord, StepResult, gather_state, run_episode
from cua.episode.handle import SandboxHandle, SandboxOpener, StreamingHandle
from cua.episode.local import LocalSandbox, open_local
from cua.episode.openers import sandbox_opener

__all__ = [
    "AgentTurn",
    "Episode",
    "EpisodeAgent",
    "EpisodeContext",
    "EpisodeRecord",
    "LocalSandbox",
    "NoopAgent",
    "OracleAgent",
    "RandomAgent",
    "SandboxHandle",
    "SandboxOpener",
    "StepRecord",
    "StepResult",
    "StreamingHandle",
    "agent_info",
    "gather_state",
    "open_local",
    "run_episode",
    "sandbox_opener",
]
