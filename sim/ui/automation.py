"""UiAutomation on the simulated phone: who holds it, what each UI reader costs, its faults.

A phone has one UiAutomation connection at a time: a second client that registers gets
``IllegalStateException: UiAutomationService ... already registered!`` (AccessibilityManager
``registerUiTestAutomationService``; the trace in bytedance/Fastbot_Android#46 and the
server output uiautomator2 ``core.py`` ``_wait_app_process_ready`` matches). The uiautomator2
server holds it for its whole life; ``uiautomator dump`` for the length of one dump. Every
refused registration is kept in ``conflicts`` and logged (kind ``"uiautomation"``), so a
test can prove phoned never ran both at once.

Costs (seconds), defaults from published measurements and the server's own code; tests set
``UiCosts.none()``:

* ``u2_start_s = 2.0``: launching the server (``app_process`` + UiAutomation connect) before
  ``/ping`` answers. No direct measurement of uiautomator2 3.x was found; the same launch as
  a one-shot instrumentation dump costs 0.9-3.2 s per call (mobile-next/mobilecli#334), so
  the middle of that range. The client polls every 0.5 s (uiautomator2 ``core.py``).
* ``dump_s = 1.5``: one ``uiautomator dump``. It waits for 1 s without accessibility events
  (DumpCommand.java ``waitForIdle(1000, 10000)``) after starting a runtime; one-shot dumps
  measure 0.9-3.2 s (mobilecli#334) and 1-4 s right after an activity starts
  (dtmilano/CulebraTester2-public#17).
* ``u2_dump_s = 0.05``: ``dumpWindowHierarchy`` on a running server: 5-40 ms warm
  (mobilecli#334), "within 100 ms" for uiautomator2 (codematrixer/hmdriver2#10).
* ``u2_query_s = 0.05``: one lookup of a selector by the running server (``objInfo``,
  ``exist``, each check of ``waitForExists``; ``getText`` and ``setText`` make two). In the
  ``u2.jar`` (0.4.1) the installed client starts, ``objInfo``/``exist`` resolve a selector
  with ``UiDevice.findObject(BySelector)``, which reads the window roots (``getWindowRoots``:
  ``waitForIdle``, then ``getRootInActiveWindow`` and every window's root) and walks their
  nodes (``ByMatcher.findMatch``); ``dumpWindowHierarchy`` reads the same roots and walks
  every node into XML (``AccessibilityNodeInfoDumper.dumpNodeRec``). ``getText``/``setText``
  call ``Selector.toUiObject2`` twice (a lookup each); ``waitForExists`` is
  ``UiDevice.wait(Until.hasObject)``, a lookup every 100 ms (``WaitMixin.wait(condition,
  timeout)`` passes 100). Read from the jar's bytecode (androguard, ``classes*.dex``). No
  public figure splits the walk from the XML, so a lookup is charged the dump's read: more
  than a lookup that stops at its first match, less than ``objInfo``, whose 17 getter calls
  each refresh the node (``UiObject2.getAccessibilityNodeInfo``: ``waitForIdle`` and
  ``refresh()``; androidx's javadoc: "can be expensive").
* ``idle_timeout_s = 10.0``: how long a never-idle screen makes ``uiautomator dump`` wait
  before ``ERROR: could not get idle state.`` (the 10 s global timeout of ``waitForIdle``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState

U2_HOLDER = "uiautomator2"
DUMP_HOLDER = "uiautomator dump"
ALREADY_REGISTERED = (
    "java.lang.IllegalStateException: UiAutomationService "
    "android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@5deffd5"
    "already registered!\n"
    "\tat android.app.UiAutomationConnection.registerUiTestAutomationServiceLocked"
    "(UiAutomationConnection.java:456)\n"
    "\tat android.app.UiAutomationConnection.connect(UiAutomationConnection.java:106)\n"
    "\tat android.app.UiAutomation.connect(UiAutomation.java:243)\n"
)


@dataclass
class UiCosts:
    """Seconds each UI reader costs (see the module docstring for the sources)."""

    u2_start_s: float = 2.0
    dump_s: float = 1.5
    u2_dump_s: float = 0.05
    idle_timeout_s: float = 10.0
    u2_query_s: float = 0.05

    @classmethod
    def none(cls) -> UiCosts:
        """No delays: what the test fixtures use unless a test is about the costs."""
        return cls(u2_start_s=0.0, dump_s=0.0, u2_dump_s=0.0, idle_timeout_s=0.0, u2_query_s=0.0)


@dataclass
class UiFaults:
    """Injected UI failures (``phoned sim --scenario``)."""

    dump_not_idle: bool = False  # uiautomator dump: idle timeout, error, no file written
    dump_killed: bool = False  # uiautomator dump: killed (137, "Killed"), no file written
    u2_broken: bool = False  # the uiautomator2 server aborts at launch (exit 134)
    u2_dies_after: int | None = None  # the server dies after N more JSON-RPC calls
    u2_left_running: bool = False  # the server outlives its shell stream, still registered


@dataclass
class UiAutomation:
    """The phone's UiAutomation registration, costs, faults and counters."""

    phone: PhoneState
    costs: UiCosts = field(default_factory=UiCosts)
    faults: UiFaults = field(default_factory=UiFaults)
    holder: str | None = None
    conflicts: list[str] = field(default_factory=list)
    u2_starts: int = 0  # servers that came up (answered /ping)
    u2_calls: int = 0  # JSON-RPC calls served
    tree_reads: int = 0  # reads of the screen's tree by the server: dumps and lookups
    server_kill: Callable[[], None] | None = None  # kills the running server, if any

    def acquire(self, who: str) -> bool:
        """Register ``who``; False (and a recorded conflict) when another client holds it."""
        with self.phone.lock:
            if self.holder is not None:
                self.conflicts.append(f"{who} while {self.holder} held UiAutomation")
                self.phone.log.record("uiautomation", ["conflict", who, self.holder])
                return False
            self.holder = who
            return True

    def release(self, who: str) -> None:
        with self.phone.lock:
            if self.holder == who:
                self.holder = None

    def read_tree(self, seconds: float) -> None:
        """One read of the screen's accessibility tree by the uiautomator2 server (a dump or
        a selector lookup): counted, then paid (``seconds``) without holding the phone."""
        with self.phone.lock:
            self.tree_reads += 1
        if seconds > 0:
            time.sleep(seconds)

    def rpc_served(self) -> bool:
        """Count one JSON-RPC call; True when the server must die after answering it."""
        with self.phone.lock:
            self.u2_calls += 1
            left = self.faults.u2_dies_after
            if left is None:
                return False
            self.faults.u2_dies_after = left - 1
            if left - 1 > 0:
                return False
            self.faults.u2_dies_after = None
            return True

    def kill_u2(self) -> bool:
        """Kill the running uiautomator2 server (what the system's low-memory killer or
        ``am force-stop`` does); False when none runs."""
        with self.phone.lock:
            kill = self.server_kill
        if kill is None:
            return False
        kill()
        return True
