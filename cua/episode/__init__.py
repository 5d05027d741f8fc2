"""The episode layer: one way to drive a sandbox and one way to run an episode.

`cua.eval`, `cua.rl` and `cua.record` drive sandboxes and run episodes only through this
package, so they cannot disagree about reset seeds, setup steps, the judge's initial
state, or what a trajectory keeps.

- `handle`: `SandboxHandle`, the one interface of a sandbox (local and remote alike)
- `local`: `LocalSandbox`, `open_local` (sandboxes in this process)
- `openers`: `sandbox_opener` (in process, a given server, or a child `cua serve`)
- `agent`: `AgentTurn`, `EpisodeAgent`, `EpisodeContext` and the built-in agents
- `policy_agent`: `PolicyAgent` (a `cua.policy.Policy` as an agent) and `policy_turn`
- `episode`: `Episode` (reset -> steps -> judge), `EpisodeRecord`
- `loop`: the one agent loop: `plan` (what a turn becomes: actions, a wasted step, or
  `STOP`), `play` (turns until the episode is over), `run_episode`
- `transition`: `RewardAccount`, the one rule of what a step pays and when it ends
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
from cua.episode.episode import Episode, EpisodeRecord, StepRecord, StepResult, gather_state
from cua.episode.handle import SandboxHandle, SandboxOpener, StreamingHandle
from cua.episode.local import LocalSandbox, open_local
from cua.episode.loop import STOP, Stop, plan, play, run_episode
from cua.episode.openers import sandbox_opener

__all__ = [
    "STOP",
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
    "Stop",
    "StepRecord",
    "StepResult",
    "StreamingHandle",
    "agent_info",
    "gather_state",
    "open_local",
    "play",
    "plan",
    "run_episode",
    "sandbox_opener",
]
