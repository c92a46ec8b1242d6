"""The simulated phone's shared state: ``PhoneState``, what every tool reads and writes.

All state lives behind ``PhoneState.lock`` (re-entrant): the transport serves every ADB
stream on its own thread, and a tool holds the lock while it reads or changes the model.
Time comes from ``PhoneState.now()`` (monotonic seconds) so asynchronous transitions
(Bluetooth turning on, a setting reverted by the system) are computed from timestamps
instead of timer threads.

Domain models live beside the tools that print them (``services/*``, ``ui/*``); this module
holds only what every domain shares: system properties, the settings tables, a small file
system, the command log and the injected faults. It imports no service: ``phone.Phone``
makes the declared services' models and hands them in (``add_service``); tools reach one as
``phone.service(Model)``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from phoned.sim import profiles

M = TypeVar("M")
SettingsHook = Callable[[str, str | None], None]


class Settings:
    """The ``system``, ``secure`` and ``global`` tables of the settings provider.

    ``on_put(namespace, key, hook)`` lets a system service react to a write the way its
    ``ContentObserver`` would (for example ZenModeHelper restoring ``zen_mode``).
    ``add_read_hook(fn)`` runs ``fn`` before every read, so services can first apply the
    asynchronous writes that are due by now (Bluetooth finishing TURNING_ON, a reverted
    ``zen_mode``); readers then see the settled value whoever they are.
    """

    NAMESPACES = ("system", "secure", "global")

    def __init__(self) -> None:
        self.tables: dict[str, dict[str, str]] = {ns: {} for ns in self.NAMESPACES}
        self._hooks: dict[tuple[str, str], list[SettingsHook]] = {}
        self._read_hooks: list[Callable[[], None]] = []
        self._settling = False

    def add_read_hook(self, hook: Callable[[], None]) -> None:
        self._read_hooks.append(hook)

    def _settle(self) -> None:
        if self._settling:  # a hook that reads settings itself must not recurse
            return
        self._settling = True
        try:
            for hook in self._read_hooks:
                hook()
        finally:
            self._settling = False

    def get(self, namespace: str, key: str) -> str | None:
        self._settle()
        return self.tables[namespace].get(key)

    def items(self, namespace: str) -> dict[str, str]:
        """A settled copy of one table."""
        self._settle()
        return dict(self.tables[namespace])

    def put(self, namespace: str, key: str, value: str, *, notify: bool = True) -> None:
        """Write a value; ``notify=False`` is a system service's own write (no observers)."""
        self.tables[namespace][key] = value
        if notify:
            for hook in self._hooks.get((namespace, key), []):
                hook(key, value)

    def delete(self, namespace: str, key: str) -> bool:
        existed = self.tables[namespace].pop(key, None) is not None
        for hook in self._hooks.get((namespace, key), []):
            hook(key, None)
        return existed

    def on_put(self, namespace: str, key: str, hook: SettingsHook) -> None:
        self._hooks.setdefault((namespace, key), []).append(hook)


@dataclass
class FileEntry:
    """One regular file on the phone."""

    data: bytes
    mode: int = 0o100644
    mtime: int = 0


class FileSystem:
    """A flat map of absolute paths to files, plus a set of directories.

    Enough for ``adb push/pull``, ``md5sum``, ``cat``, ``ls`` and shell redirections.
    """

    DEFAULT_DIRS = (
        "/",
        "/sdcard",
        "/storage",
        "/storage/emulated",
        "/storage/emulated/0",
        "/data",
        "/data/local",
        "/data/local/tmp",
        "/system",
        "/system/bin",
        "/system/xbin",
        "/dev",
        "/proc",
        "/vendor",
        "/product",
        "/apex",
        "/sys",
        "/etc",
        "/cache",
        "/mnt",
    )

    def __init__(self) -> None:
        self.files: dict[str, FileEntry] = {}
        self.dirs: set[str] = set(self.DEFAULT_DIRS)

    @staticmethod
    def normalize(path: str, cwd: str = "/") -> str:
        if not path.startswith("/"):
            path = cwd.rstrip("/") + "/" + path
        parts: list[str] = []
        for part in path.split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if parts:
                    parts.pop()
                continue
            parts.append(part)
        return "/" + "/".join(parts)

    def is_dir(self, path: str) -> bool:
        return path in self.dirs

    def exists(self, path: str) -> bool:
        return path in self.files or path in self.dirs or path == "/dev/null"

    def read(self, path: str) -> bytes:
        """Raise ``FileNotFoundError`` or ``IsADirectoryError`` like ``open`` would."""
        if path == "/dev/null":
            return b""
        if path in self.dirs:
            raise IsADirectoryError(path)
        if path not in self.files:
            raise FileNotFoundError(path)
        return self.files[path].data

    def write(
        self, path: str, data: bytes, *, append: bool = False, mode: int | None = None
    ) -> None:
        """Raise ``FileNotFoundError`` when the parent directory does not exist."""
        if path == "/dev/null":
            return
        if path in self.dirs:
            raise IsADirectoryError(path)
        parent = path.rsplit("/", 1)[0] or "/"
        if parent not in self.dirs:
            raise FileNotFoundError(parent)
        old = self.files.get(path)
        if append and old is not None:
            data = old.data + data
        self.files[path] = FileEntry(
            data=data,
            mode=mode if mode is not None else (old.mode if old else 0o100644),
            mtime=int(time.time()),
        )

    def mkdir(self, path: str, *, parents: bool = False) -> None:
        parent = path.rsplit("/", 1)[0] or "/"
        if parent not in self.dirs:
            if not parents:
                raise FileNotFoundError(parent)
            self.mkdir(parent, parents=True)
        self.dirs.add(path)

    def remove(self, path: str) -> None:
        if path not in self.files:
            raise FileNotFoundError(path)
        del self.files[path]

    def remove_tree(self, path: str) -> None:
        """Remove a directory with every file and directory below it (``rm -r``)."""
        prefix = path.rstrip("/") + "/"
        for name in [p for p in self.files if p.startswith(prefix)]:
            del self.files[name]
        self.dirs -= {d for d in self.dirs if d == path or d.startswith(prefix)}

    def listdir(self, path: str) -> list[str]:
        """Names directly under ``path`` (files and directories), sorted."""
        if path not in self.dirs:
            raise FileNotFoundError(path)
        prefix = path.rstrip("/") + "/"
        names = {
            p[len(prefix) :].split("/", 1)[0]
            for p in (*self.files, *self.dirs)
            if p.startswith(prefix) and p != path
        }
        return sorted(names)


@dataclass(frozen=True)
class ReceivedCommand:
    """One simple command the phone executed, or one UI event it received."""

    seq: int
    ts: float  # wall-clock seconds
    kind: str  # "exec": a simple command; "click": a UI tap; "swipe"; "service": a non-shell ADB service
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)  # VAR=x assignments before the command
    exit_code: int | None = None
    line: str = ""  # the whole shell command line this command came from

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "ts": self.ts,
            "kind": self.kind,
            "argv": list(self.argv),
            "env": self.env,
            "exit_code": self.exit_code,
            "line": self.line,
        }


class CommandLog:
    """Every executed simple command (one entry each) and every UI click, in order.

    Tests read ``entries()``; ``phoned sim --log FILE`` also appends JSON lines to a file.
    """

    def __init__(self, path: Path | None = None) -> None:
        self._entries: list[ReceivedCommand] = []
        self._lock = threading.Lock()
        self._path = path

    def record(
        self,
        kind: str,
        argv: list[str] | tuple[str, ...],
        *,
        env: dict[str, str] | None = None,
        exit_code: int | None = None,
        line: str = "",
    ) -> ReceivedCommand:
        with self._lock:
            rec = ReceivedCommand(
                seq=len(self._entries) + 1,
                ts=time.time(),
                kind=kind,
                argv=tuple(argv),
                env=dict(env or {}),
                exit_code=exit_code,
                line=line,
            )
            self._entries.append(rec)
            if self._path is not None:
                with self._path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(rec.to_json(), ensure_ascii=False) + "\n")
            return rec

    def entries(self, kind: str | None = None) -> list[ReceivedCommand]:
        with self._lock:
            return [e for e in self._entries if kind is None or e.kind == kind]

    def argvs(self) -> list[tuple[str, ...]]:
        """The argv of every executed simple command, in order."""
        return [e.argv for e in self.entries("exec")]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


@dataclass
class Faults:
    """Injected faults; scenarios and tests set these before or while the phone runs."""

    drop_after_commands: int | None = None  # run N simple commands, then drop the transport
    drop_at: str | None = None  # drop the transport at a named point (see Phone.fault_point)
    unauthorized: bool = False  # AUTH is never accepted: adb lists the phone as unauthorized
    slow_ms: int = 0  # every shell command answers this much later
    permission_dialog_packages: set[str] = field(default_factory=set)  # opening these apps asks
    no_bluetooth: bool = False  # the phone has no Bluetooth adapter
    dnd_noop: bool = False  # DND changes are accepted and silently do nothing
    inject_denied: bool = False  # MIUI without "USB debugging (Security settings)": no input


@dataclass
class Process:
    """One process ``ps`` lists: who runs it, its name (argv[0]) and command line."""

    pid: int
    ppid: int
    user: str
    name: str  # ps NAME: argv[0] as the process was started
    args: str  # ps ARGS: the whole command line
    kill: Callable[[], None] | None = None  # what SIGTERM/SIGKILL does; None: shell may not


# Processes that are always running (pids and users as a freshly booted Pixel shows them in
# ``ps -A``): system ones run as root or system, the shell may not signal them.
BOOT_PROCESSES = (
    (1, 0, "root", "init"), (392, 1, "root", "ueventd"), (561, 1, "logd", "logd"),
    (563, 1, "system", "servicemanager"), (586, 1, "root", "vold"),
    (925, 1, "root", "zygote64"), (926, 1, "root", "zygote"),
    (1001, 1, "system", "surfaceflinger"), (1142, 1, "shell", "adbd"),
    (1540, 925, "system", "system_server"), (2013, 925, "u0_a187", "com.android.systemui"),
    (2301, 925, "radio", "com.android.phone"),
    (2577, 925, "u0_a154", "com.google.android.inputmethod.latin"),
)  # fmt: skip
FIRST_SPAWNED_PID = 20000


class ProcessTable:
    """The phone's running processes: the boot ones plus what tools start (``spawn``)."""

    def __init__(self) -> None:
        self.running: dict[int, Process] = {
            pid: Process(pid, ppid, user, name, name) for pid, ppid, user, name in BOOT_PROCESSES
        }
        self._next_pid = FIRST_SPAWNED_PID

    def spawn(self, user: str, name: str, args: str, kill: Callable[[], None] | None) -> int:
        """A new process started by adbd's shell (parent 1142); its pid."""
        self._next_pid += 1
        self.running[self._next_pid] = Process(self._next_pid, 1142, user, name, args, kill)
        return self._next_pid

    def exited(self, pid: int) -> None:
        self.running.pop(pid, None)

    def pids_named(self, name: str) -> list[int]:
        """Pids whose name (or its last path part) is ``name``, newest first (toybox pidof)."""
        return sorted(
            (p.pid for p in self.running.values() if name in (p.name, p.name.rsplit("/", 1)[-1])),
            reverse=True,
        )


class PhoneState:
    """One simulated Android phone's shared state, and the models of its services.

    ``drop_connection()`` asks every transport serving this phone to close its socket
    abruptly (the fault "phone fell off the bus").
    """

    def __init__(
        self, sdk: int = 34, serial: str = "SIM0001", log_path: Path | None = None
    ) -> None:
        self.sdk = sdk
        self.serial = serial
        self.lock = threading.RLock()
        self.props: dict[str, str] = profiles.properties(sdk, serial)
        self.settings = Settings()
        self.fs = FileSystem()
        self.log = CommandLog(log_path)
        self.faults = Faults()
        self.booted_at = time.monotonic()
        self.commands_started = 0
        # tcp: port -> (host, port) of a local socket that the transport bridges ``tcp:N`` to
        self.tcp_listeners: dict[int, tuple[str, int]] = {}
        self.processes = ProcessTable()
        self._drop_listeners: list[Callable[[str], None]] = []

        self._models: dict[type, object] = {}
        self._init_settings()

    def add_service(self, kind: type[M], model: M) -> None:
        """Keep ``model`` as this phone's ``service(kind)``."""
        self._models[kind] = model

    def service(self, model: type[M]) -> M:
        """This phone's instance of a declared service model (``phone.service(WifiRadio)``)."""
        try:
            found = self._models[model]
        except KeyError:
            raise KeyError(
                f"no module declares {model.__name__}: end it with "
                f"SIM_SERVICE = SimService('name', {model.__name__})"
            ) from None
        assert isinstance(found, model)
        return found

    def _init_settings(self) -> None:
        g, s, y = (
            self.settings.tables["global"],
            self.settings.tables["secure"],
            self.settings.tables["system"],
        )
        g.update(
            {
                "adb_enabled": "1",
                "airplane_mode_on": "0",
                "bluetooth_on": "0",
                "device_name": self.props["ro.product.model"],
                "development_settings_enabled": "1",
                "stay_on_while_plugged_in": "0",
                "wifi_on": "1",
                "zen_mode": "0",
                "boot_count": "1",
                "auto_time": "1",
            }
        )
        s.update(
            {
                "android_id": "%016x" % (abs(hash(self.serial)) & 0xFFFFFFFFFFFFFFFF),
                "bluetooth_name": self.props["ro.product.model"],
                "default_input_method": "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME",
                "enabled_notification_listeners": "",
                "enabled_notification_policy_access_packages": "",
                "user_setup_complete": "1",
            }
        )
        y.update(
            {
                # AOSP SettingsProvider's defaults (res/values/defaults.xml
                # def_screen_brightness 102, def_screen_brightness_automatic_mode false), as
                # emulator images ship them; what a vendor or Pixel build overlays is not
                # known here, so every profile gets these.
                "screen_brightness": "102",
                "screen_brightness_mode": "0",
                "screen_off_timeout": "60000",
                "volume_music": "5",
                "accelerometer_rotation": "0",
                "user_rotation": "0",
            }
        )

    def now(self) -> float:
        """Monotonic seconds; every asynchronous transition is computed from it."""
        return time.monotonic()

    def uptime(self) -> float:
        return self.now() - self.booted_at

    def add_drop_listener(self, listener: Callable[[str], None]) -> None:
        with self.lock:
            self._drop_listeners.append(listener)

    def remove_drop_listener(self, listener: Callable[[str], None]) -> None:
        with self.lock:
            if listener in self._drop_listeners:
                self._drop_listeners.remove(listener)

    def drop_connection(self, reason: str) -> None:
        """Close every transport to this phone at once, as if the cable was pulled."""
        with self.lock:
            listeners = list(self._drop_listeners)
        for listener in listeners:
            listener(reason)

    def fault_point(self, name: str) -> None:
        """Code paths call this at named points; drops the transport if a fault targets it."""
        if self.faults.drop_at == name:
            self.faults.drop_at = None
            self.drop_connection(f"fault point {name}")

    def command_started(self) -> bool:
        """Count a simple command before it runs; False means the transport was just dropped.

        With ``drop_after_commands = N`` the first N commands run and the next one drops the
        transport instead of running.
        """
        with self.lock:
            self.commands_started += 1
            limit = self.faults.drop_after_commands
            if limit is None or self.commands_started <= limit:
                return True
            self.faults.drop_after_commands = None
        self.drop_connection(f"after {limit} commands")
        return False
