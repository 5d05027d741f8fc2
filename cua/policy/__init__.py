"""The VLM policy side of cua: model families (prompt + parser), backends, and a server.

Import stays cheap: backends (httpx, transformers, torch) load only when used.
"""

from cua.policy.base import (
    ParseError,
    Policy,
    PolicyOptions,
    PolicyStep,
    TokenCounts,
    TokenLogprob,
)
from cua.policy.registry import make_policy

__all__ = ["ParseError", "Policy", "PolicyOptions", "PolicyStep", "TokenCounts", "TokenLogprob", "make_policy"]
