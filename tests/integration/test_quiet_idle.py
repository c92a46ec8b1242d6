"""Issue #24, point 6: an idle ``phoned run`` with one phone on the real adb server sleeps.

Counted, not timed: each thread's context switches over 20 s (``/proc/PID/task/*/status``;
a thread asleep until a timer or a socket wakes it switches once per wake-up), by the names
the daemon gives its threads (``phoned.foundation.threads``). With the default intervals an idle
daemon's main loop wakes for sweeps and presence (every 30 s), the phone's hold renews
every 20 s, the dispatcher sleeps on the queue's wake-up socket, and the device tracker on
the adb server's stream. Before, the main loop and the dispatcher woke every second and
the tracker twice a second (~245 wake-ups a minute; ``scripts/bench_daemon.py`` reports
the figure over 60 s).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from phoned.daemon.lifecycle.states import TaskState
from phoned_process import fresh_daemon

from scripts.bench_daemon import thread_switches

QUIET_ENV = ("PHONED_POLL_INTERVAL", "PHONED_HEARTBEAT_INTERVAL", "PHONED_SWEEP_INTERVAL")


def _by_name(counts: dict[str, int]) -> dict[str, int]:
    named: dict[str, int] = {}
    for key, count in counts.items():
        name = key.rsplit("/", 1)[0]
        named[name] = named.get(name, 0) + count
    return named


def test_an_idle_daemon_wakes_a_few_times_a_minute(
    daemon_env: dict[str, str], tmp_path: Path, sim_factory: Any
) -> None:
    env = {k: v for k, v in daemon_env.items() if k not in QUIET_ENV}  # the defaults
    env["PHONED_STATE_DIR"] = str(tmp_path / "state")
    sim = sim_factory(sdk=34)
    with fresh_daemon(env, tmp_path) as daemon:
        daemon.start()
        daemon.serving(sim.serial)
        done = daemon.submit({"method": "dnd.get", "params": {}})
        daemon.state(done, TaskState.COMPLETED)
        time.sleep(2.0)  # the worker back to idle, the dispatcher asleep
        assert daemon.proc is not None
        assert "polling the queue only" not in daemon.log.read_text()  # it has its socket
        before = _by_name(thread_switches(daemon.proc.pid))
        time.sleep(20.0)
        after = _by_name(thread_switches(daemon.proc.pid))
        woke = {name: after[name] - before.get(name, 0) for name in after}
        assert {"phoned", "dispatch", "track-devices"} <= set(woke), woke
        assert woke["dispatch"] <= 2, woke  # was 20 in 20 s (a queue read every second)
        assert woke["phoned"] <= 4, woke  # was 20 (the main loop's 1 s tick)
        assert woke["track-devices"] <= 2, woke  # was 40 (a 0.5 s read timeout)
        assert sum(woke.values()) <= 15, woke  # ~82 before
