"""The compaction tiers, cheapest and least lossy first (DESIGN §6). Each one proposes, the policy decides.

T1 `MicroCompact` · T2 `MemoryCompact` · T3 `RegionCompact` · T4 `FullCompact` · T5 `Emergency`
(+ `static_summary`) · `Digest` (tool_trace = "digest").
"""

from agent_cli.context.tiers.digest import Digest
from agent_cli.context.tiers.emergency import Emergency, static_summary
from agent_cli.context.tiers.full import FullCompact
from agent_cli.context.tiers.memory_compact import MemoryCompact
from agent_cli.context.tiers.micro import MicroCompact
from agent_cli.context.tiers.region import RegionCompact

__all__ = [
    "Digest",
    "Emergency",
    "FullCompact",
    "MemoryCompact",
    "MicroCompact",
    "RegionCompact",
    "static_summary",
]
