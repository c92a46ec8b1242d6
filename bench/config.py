"""Sample counts of a full run (the issue's figures) and of ``--short`` (CI)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    """How much each section measures."""

    short: bool
    sdk: int = 34
    shell_runs: int = 200  # round trips per shell series
    method_runs: int = 20  # calls per method and implementation
    latency_runs: int = 50  # dnd.set tasks submitted to the daemon
    idle_s: float = 60.0  # idle CPU/RSS window
    idle_phones: tuple[int, ...] = (1, 2, 5, 10)  # simulated phones per idle measurement
    snapshot_runs: int = 30
    ui_runs: int = 10  # calls per method and UI path, with the simulated UI cost model on
    claim_tasks: int = 2000
    claim_procs: tuple[int, ...] = (1, 4)
    claim_cycle: bool = True  # also claim+start+complete
    pg_tasks: int = 2000
    pg_claimers: tuple[int, ...] = (1, 4, 50)
    pg_repeats: int = 5  # comparisons per claimer count, judged on their median ratio
    pg_control: tuple[int, ...] = (4,)  # claimer counts with an A/A run (floor vs floor)
    pg_batch: int = 10  # phones per daemon in the claim_batch row (4 daemons)

    def verdict(self, ok: bool) -> str:
        """A goal's word in a note: ``met`` / ``NOT met`` in a full run. A short run (CI's:
        a few samples on a machine running the test suite) judges nothing it misses: such
        a note says so instead of reading as a failure (the full run measures the goal)."""
        if ok:
            return "met"
        return "not judged (short run; bench/run.py measures it)" if self.short else "NOT met"


FULL = Config(short=False)
SHORT = Config(
    short=True,
    shell_runs=30,
    method_runs=3,
    latency_runs=10,
    idle_s=5.0,
    idle_phones=(1, 2),
    snapshot_runs=5,
    ui_runs=1,
    claim_tasks=300,
    claim_cycle=False,
    pg_tasks=200,
    pg_claimers=(1, 4),
    pg_repeats=1,
    pg_control=(1,),
)
