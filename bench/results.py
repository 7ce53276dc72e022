"""What one run measured, and the figures derived from it that the report's sections
quote (bench/report.py renders it; report_peers.py and report_targets.py read it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from bench.board_streams import BoardStreamsResult
from bench.config import Config
from bench.measure import Series, median
from bench.peers_run import PeerResult
from bench.service import ServiceResult
from bench.shared_writers import WriterResult
from bench.workloads import OP_ORDER, SizeResult


@dataclass
class RunResults:
    cfg: Config
    quick: bool
    mach: dict[str, str]
    sizes: dict[int, SizeResult] = field(default_factory=dict)
    startup_ours: list[float] = field(default_factory=list)
    startup_echo: list[float] = field(default_factory=list)
    echo_rss_kb: int | None = None
    tools: int = 0
    tools_chars: int = 0
    writers: list[WriterResult] = field(default_factory=list)
    peers: list[PeerResult] = field(default_factory=list)
    ours_two: WriterResult | None = None
    disk: dict[str, Series] = field(default_factory=dict)  # durable-write floor, no MCP
    service: ServiceResult | None = None
    pg: SizeResult | None = None  # the main size again, over --store postgresql://…
    ours_peer: PeerResult | None = None  # ours filled through TaskCreate, run as a peer is
    boards: BoardStreamsResult | None = None  # with --boards
    team: list[str] = field(default_factory=list)  # the team-of-agents section's lines (bench.team)
    history: list[str] = field(default_factory=list)  # the history-reads section's lines (bench.history_read)
    lock: list[str] = field(default_factory=list)  # the plan lock's hand-over section (bench.lock_handover)
    elapsed: float = 0.0

    # The smallest and largest plan sizes (for growth), and the size most tables quote:
    # 1,000 tasks if it was run, else the largest.
    @property
    def lo(self) -> int:
        return min(self.sizes)

    @property
    def hi(self) -> int:
        return max(self.sizes)

    @property
    def main_n(self) -> int:
        return 1_000 if 1_000 in self.sizes else self.hi

    @property
    def startup_ratio(self) -> float:
        return median(self.startup_ours) / median(self.startup_echo)

    def growth(self) -> dict[str, float]:
        """Per operation: the × echo ratio at the largest size / the one at the smallest. Each
        size runs minutes apart on a shared machine; dividing by the echo calls made beside
        each of ours cancels the machine's drift, which raw medians do not."""
        return {op: self.sizes[self.hi].ops[op].ratio / self.sizes[self.lo].ops[op].ratio for op in OP_ORDER}

    def raw_growth(self) -> dict[str, float]:
        """Per operation: median at the largest size / median at the smallest."""
        return {op: self.sizes[self.hi].ops[op].med / self.sizes[self.lo].ops[op].med for op in OP_ORDER}
