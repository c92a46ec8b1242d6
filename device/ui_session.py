"""One uiautomator2 session per phone: started on first use, checked, restarted, or absent.

``UiSession.use()`` holds the session's lock for one whole UI operation (a hierarchy read,
a wait, a tap) and yields a ``Lease``: the uiautomator2 client when its server runs, else
``None``, which tells the caller to take the shell path (``uiautomator dump``). The lock
makes sure one phone never runs both at once: ``uiautomator dump`` while the uiautomator2
server holds UiAutomation fails with "UiAutomationService ... already registered!".

* **Start**: the first ``use()`` builds the client (``uiautomator2.Device``), which pushes
  ``u2.jar`` when its md5 differs, launches it with ``app_process`` and waits for ``/ping``
  (uiautomator2 3.x ``core.py``). ``import uiautomator2`` happens only here.
* **Health**: a later ``use()`` first asks the server's ``/ping`` (the client's own
  ``_check_alive``, one HTTP round trip through ``tcp:9008``), unless the session was handed
  out less than ``fresh_s`` ago and no call failed since (``invalidate``): one action's
  several reads cost one ping, and a task that comes later always pings.
* **Restart**: a server that does not answer is relaunched once (``start_uiautomator``).
* **Fallback**: when the start or the restart fails, the client is stopped (so nothing
  holds UiAutomation), the error is kept, and ``use()`` yields the shell path; a new start
  is tried after ``retry_after`` seconds, not on every read.
* **Close**: ``close()`` stops the server; the daemon calls it when the phone's worker ends.

Every start, restart and failure is returned in the lease's ``events`` so the action's
evidence shows what the session did and what it cost. uiautomator2 exceptions are
translated to the device error tree (``phoned.device.translate``).
"""

from __future__ import annotations

import contextlib
import enum
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from phoned.device.translate import translate

if TYPE_CHECKING:
    import adbutils


class SessionDevice(Protocol):
    """What a session needs of its phone (``phoned.device.connection.Device`` is one)."""

    serial: str

    @property
    def adb(self) -> adbutils.AdbDevice: ...


class UiPath(str, enum.Enum):
    """Which reader and tapper a UI operation used; evidence names it."""

    U2 = "uiautomator2"  # the warm uiautomator2 session (JSON-RPC over tcp:9008)
    SHELL = "uiautomator dump"  # the shell fallback: uiautomator dump + cat, input tap


class UiMode(str, enum.Enum):
    """What the session may use."""

    AUTO = "auto"  # uiautomator2, the shell path only when the session cannot start
    SHELL = "shell"  # the shell path only (a baseline, or a phone where u2 is unwanted)


@dataclass(frozen=True)
class SessionEvent:
    """Something the session did before handing out a lease (evidence)."""

    action: str  # "start", "restart", "ping"
    ok: bool
    duration_ms: float
    error: str = ""


@dataclass
class Lease:
    """One use of the UI path: the client (None: shell path) and what it took to get it."""

    client: Any | None
    events: list[SessionEvent] = field(default_factory=list)
    reason: str = ""  # why the shell path is used, when it is

    @property
    def path(self) -> UiPath:
        return UiPath.SHELL if self.client is None else UiPath.U2


@dataclass
class SessionStats:
    """Counters for tests and the benchmark."""

    starts: int = 0  # uiautomator2.connect() calls
    restarts: int = 0  # start_uiautomator() after a failed health check
    failures: int = 0  # starts or restarts that failed (the shell path was used)
    last_error: str = ""


class UiSession:
    """The uiautomator2 session of one ``Device``; see the module docstring."""

    RETRY_AFTER_S = 60.0
    FRESH_S = 2.0

    def __init__(
        self,
        device: SessionDevice,
        mode: UiMode = UiMode.AUTO,
        retry_after: float = RETRY_AFTER_S,
        clock: Callable[[], float] = time.monotonic,
        fresh_s: float = FRESH_S,
    ) -> None:
        self.device = device
        self.mode = mode
        self.retry_after = retry_after
        self.fresh_s = fresh_s
        self.clock = clock
        self._fresh_until = 0.0
        self.stats = SessionStats()
        self._lock = threading.RLock()
        self._client: Any | None = None
        self._unavailable_until = 0.0

    @contextlib.contextmanager
    def use(self) -> Iterator[Lease]:
        """The UI path for one operation; the lock is held until the block ends."""
        with self._lock:
            yield self._lease()

    def client(self) -> Any | None:
        """The running client, started or restarted if needed; None when it cannot run."""
        with self.use() as lease:
            return lease.client

    def set_mode(self, mode: UiMode) -> None:
        """Switch paths; a running server is stopped first when the shell path is chosen
        (it would hold UiAutomation and make every ``uiautomator dump`` fail)."""
        with self._lock:
            self.mode = mode
            if mode is UiMode.SHELL:
                self.close()

    def invalidate(self, reason: str) -> None:
        """A call on the client failed: check and restart it on the next ``use()``."""
        with self._lock:
            self.stats.last_error = reason
            self._fresh_until = 0.0

    def close(self) -> None:
        """Stop the server (if any); the next ``use()`` starts a new one."""
        with self._lock:
            client, self._client = self._client, None
            self._fresh_until = 0.0
        if client is not None:
            _stop(client, wait=True)  # the shell path may follow: UiAutomation must be free

    # -- internals ------------------------------------------------------------------------
    def _lease(self) -> Lease:
        if self.mode is UiMode.SHELL:
            return Lease(None, reason="the session is configured for the shell path")
        if self._client is None:
            if self.clock() < self._unavailable_until:
                return Lease(None, reason=f"uiautomator2 unavailable: {self.stats.last_error}")
            return self._start()
        if self.clock() < self._fresh_until:
            return self._handed(Lease(self._client))
        events: list[SessionEvent] = []
        started = time.monotonic()
        alive = _alive(self._client)
        events.append(SessionEvent("ping", alive, _ms(started)))
        if alive:
            return self._handed(Lease(self._client, events))
        return self._restart(events)

    def _handed(self, lease: Lease) -> Lease:
        if lease.client is not None:
            self._fresh_until = self.clock() + self.fresh_s
        return lease

    def _start(self) -> Lease:
        started = time.monotonic()
        self.stats.starts += 1
        try:
            self._client = _connect(self.device.adb)
        except Exception as exc:
            error = translate(exc, self.device.serial)
            return self._unavailable([SessionEvent("start", False, _ms(started), str(error))])
        return self._handed(Lease(self._client, [SessionEvent("start", True, _ms(started))]))

    def _restart(self, events: list[SessionEvent]) -> Lease:
        started = time.monotonic()
        self.stats.restarts += 1
        client = self._client
        assert client is not None  # only called with a client whose ping failed
        try:  # stop what is left of the old server (its stream), then launch a new one
            client.stop_uiautomator(wait=False)
            client.start_uiautomator()
        except Exception as exc:
            error = translate(exc, self.device.serial)
            self._client = None
            _stop(client)
            events.append(SessionEvent("restart", False, _ms(started), str(error)))
            return self._unavailable(events)
        events.append(SessionEvent("restart", True, _ms(started)))
        return self._handed(Lease(client, events))

    def _unavailable(self, events: list[SessionEvent]) -> Lease:
        self.stats.failures += 1
        self.stats.last_error = events[-1].error
        self._unavailable_until = self.clock() + self.retry_after
        return Lease(None, events, reason=f"uiautomator2 could not start: {events[-1].error}")


def _connect(adb_device: Any) -> Any:
    """``uiautomator2.connect(adb_device)``, except that a server that fails to start has its
    shell stream closed here: the client's constructor starts the server and, when that
    raises, drops the half-built client with the stream still open. ``adb_device`` comes
    from ``AdbServer.client``, whose streams send at once (``device/adb.py``
    ``_adbutils_client``: about 40 ms less a JSON-RPC call)."""
    import uiautomator2  # lazy: uiautomator2 only when a UI flow needs it

    class Client(uiautomator2.Device):
        deferred = True

        def start_uiautomator(self) -> None:
            if not self.deferred:  # the constructor's own start is deferred to _connect
                super().start_uiautomator()

    client = Client(adb_device)
    client.deferred = False
    try:
        client.start_uiautomator()
    except Exception:
        _stop(client)
        raise
    return client


def _alive(client: Any) -> bool:
    """The client's own health check: ``GET /ping`` answers ``pong`` (uiautomator2 core.py)."""
    try:
        return bool(client._check_alive())
    except Exception:  # a device gone mid-check: not alive, the restart will say why
        return False


def _stop(client: Any, wait: bool = False) -> None:
    """Stop the server's process (with ``wait``: until ``/ping`` no longer answers, polled
    every 0.5 s for at most 10 s by the client); the phone may already be gone."""
    with contextlib.suppress(Exception):
        client.stop_uiautomator(wait=wait)


def _ms(started: float) -> float:
    return (time.monotonic() - started) * 1000
