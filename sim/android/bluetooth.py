"""Bluetooth adapter model with the manager's asynchronous states; ``cmd bluetooth_manager``,
``svc bluetooth``, ``dumpsys bluetooth_manager``.

Sources:

* ``BluetoothManagerService.dump`` (frameworks/base services/core, Android 9-12; then
  packages/modules/Bluetooth/service): ``Bluetooth Status`` / ``enabled`` / ``state`` /
  ``address`` / ``name`` / ``time since enabled`` (only while ``mEnable``,
  ``%02d:%02d:%02d.%03d``), then the enable log and crash count. Android 9-12 print the full
  address and ``N BLE app[s]registered`` (sic, no space) with each app's package below; the
  module (13+) masks the address (``XX:XX:XX:XX:82:10``), logs ``Package [pkg] requested to
  [Enable]. \\tReason is X`` and prints ``Number of Ble app registered: N`` and a
  ``BluetoothManagerService:`` block (captured Galaxy A21s dump, find_string id 59229681066;
  AOSP 13-15 print ``N BLE app[s] registered`` there).
* States (``BluetoothAdapter.nameForState``) and their order (AdapterState, packages/modules/
  Bluetooth android/app/.../btservice/AdapterState.java): enable OFF -> BLE_TURNING_ON ->
  BLE_ON -> TURNING_ON -> ON, or BLE_ON -> TURNING_ON -> ON; disable ON -> TURNING_OFF ->
  BLE_ON, then BLE_TURNING_OFF -> OFF unless a BLE app is registered
  (BluetoothManagerService.sendBrEdrDownCallback: "Staying in BLE_ON"). Apps register through
  ``BluetoothAdapter.enableBLE()``, which refuses unless ``ble_scan_always_enabled`` is
  non-zero; the manager refuses in airplane mode (``enableBle``), and clears every BLE app and
  stops BLE when that setting turns 0 (``registerForBleScanModeChange``) or airplane mode
  turns on. Read in LineageOS/android_packages_modules_Bluetooth lineage-20.0/21.0/22.0.
* ``bluetooth_on``: ``disable(persist=true)`` writes 0 at the request (every release);
  Android 13+ write 1 when MESSAGE_ENABLE is handled (request time), Android 9-12 when the
  adapter leaves BLE_ON for classic (``continueFromBleOnState`` / "BT Enable in BLE_ON
  State"; an Android 9-era frameworks/base copy, find_string id 38526687). Airplane mode on
  turns a non-zero value into 2 (BLUETOOTH_ON_AIRPLANE) and the adapter off; off turns it
  back into 1 and re-enables if the user had it on (``handleAirplaneModeChanged``; the
  BluetoothAirplaneModeListener observes ``airplane_mode_on``).
* ``BluetoothShellCommand`` (API 33+): ``BluetoothShellCommand: Exec enable`` then
  ``enable: Success``. ``enableBle``/``disableBle`` (listed from API 34 here) are privileged:
  any uid but root gets a SecurityException, which BasicShellCommandHandler prints after an
  empty line and ``Exception occurred while executing 'enableBle':`` with exit 255. Below 33
  the binder has no shell command: Binder.onShellCommand prints ``No shell command
  implementation.`` to stderr and exits 0.
* ``svc bluetooth``: frameworks/base/cmds/svc BluetoothCommand.java (API <= 32, exit 0 always,
  ``Got a null BluetoothAdapter, is the system running?`` without an adapter); from API 33 the
  ``svc`` script runs ``exec cmd bluetooth_manager enable|disable`` and prints its own usage
  with exit 1 otherwise.
* Without Bluetooth hardware SystemServer never registers ``bluetooth_manager``: ``dumpsys``
  and ``cmd`` print the service-manager "Can't find service" message.
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from phoned.sim.shell.registry import SimService, ToolIO, service

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState

SHELL_COMMAND_SINCE_SDK = 33
ENABLE_BLE_SINCE_SDK = 34  # as bluetooth_manager_help lists it
PERSIST_ON_REQUEST_SINCE_SDK = 33  # bluetooth_on=1 at MESSAGE_ENABLE (module), else at BLE_ON
ADDRESS = "F8:0F:F9:3A:82:10"
GMS = "com.google.android.gms"  # the usual BLE scanning app (Nearby, Fast Pair)

# Each transition: (state shown, share of its duration) legs, then the state it rests in.
Legs = tuple[tuple[str, float], ...]
_UP_FROM_OFF: Legs = (("BLE_TURNING_ON", 0.45), ("BLE_ON", 0.05), ("TURNING_ON", 0.5))
_UP_FROM_BLE_ON: Legs = (("TURNING_ON", 1.0),)
_DOWN_TO_BLE_ON: Legs = (("TURNING_OFF", 1.0),)
_DOWN_TO_OFF: Legs = (("TURNING_OFF", 0.5), ("BLE_ON", 0.05), ("BLE_TURNING_OFF", 0.45))
_BLE_UP: Legs = (("BLE_TURNING_ON", 1.0),)
_BLE_DOWN: Legs = (("BLE_TURNING_OFF", 1.0),)
_RESTING = ("OFF", "BLE_ON", "ON")


@dataclass(frozen=True)
class EnableLogEntry:
    """One line of the manager's enable/disable history."""

    wall: float  # time.time() when requested
    enable: bool
    package: str
    reason: str


class BluetoothAdapter:
    """The manager's adapter state, computed from ``phone.now()`` through each transition's
    legs; ``bluetooth_on`` written as the release's manager writes it.
    """

    TURN_ON_S = 1.0  # tests shorten these
    TURN_OFF_S = 0.5

    def __init__(self, phone: PhoneState) -> None:
        self.phone = phone
        on = phone.settings.tables["global"].get("bluetooth_on") == "1"
        self._rest = "ON" if on else "OFF"  # where the running transition ends
        self._legs: Legs = ()
        self._duration = 0.0
        self._since = float("-inf")
        self._enabled_at = phone.now()
        self._enable_external = on  # the user's last classic request (mEnableExternal)
        self._pending: tuple[str, float] | None = None  # bluetooth_on value, at elapsed s
        self.ble_apps: list[str] = []  # packages registered through enableBLE
        self.state_text_override: str | None = None  # a fault: the dump prints this state
        self.log: list[EnableLogEntry] = []
        phone.settings.on_put("global", "airplane_mode_on", self._on_airplane_mode)
        phone.settings.on_put("global", "ble_scan_always_enabled", self._on_ble_scan_setting)
        phone.settings.add_read_hook(self.settle)  # a finished transition lands before any read

    @property
    def present(self) -> bool:
        return not self.phone.faults.no_bluetooth

    # ---- the state machine ---------------------------------------------------------------

    def _raw_state(self) -> str:
        elapsed = self.phone.now() - self._since
        if elapsed >= self._duration:
            return self._rest
        for name, _ in self._legs:
            if elapsed < self._leg_end(name):
                return name
        return self._rest

    def _leg_end(self, name: str) -> float:
        """Seconds into the running transition at which leg ``name`` ends."""
        end = 0.0
        for leg, share in self._legs:
            end += share * self._duration
            if leg == name:
                return end
        return self._duration

    def _start(self, legs: Legs, rest: str, duration: float) -> None:
        self._legs, self._rest, self._duration = legs, rest, duration
        self._since = self.phone.now()

    def settle(self) -> None:
        """Write a pending ``bluetooth_on`` once the transition has reached its moment."""
        with self.phone.lock:
            if self._pending and self.phone.now() - self._since >= self._pending[1]:
                value = self._pending[0]
                self._pending = None
                self.phone.settings.put("global", "bluetooth_on", value, notify=False)

    def settle_now(self) -> None:
        """Finish the running transition at once (a scenario's starting state)."""
        with self.phone.lock:
            self._since = float("-inf")
            self.settle()

    @property
    def state(self) -> str:
        """OFF, BLE_TURNING_ON, BLE_ON, TURNING_ON, ON, TURNING_OFF or BLE_TURNING_OFF
        (BluetoothAdapter.nameForState)."""
        self.settle()
        return self._raw_state()

    @property
    def enabled(self) -> bool:
        """BluetoothAdapter.isEnabled(): true only in state ON."""
        return self.state == "ON"

    def _persist(self, value: str, at: float = 0.0) -> None:
        """Write ``bluetooth_on`` now (``at`` 0) or ``at`` seconds into the transition."""
        if at <= 0:
            self._pending = None
            self.phone.settings.put("global", "bluetooth_on", value, notify=False)
        else:
            self._pending = (value, at)

    def _persisted_on(self) -> bool:
        """isBluetoothPersistedStateOn: ``bluetooth_on`` != 0."""
        return self.phone.settings.tables["global"].get("bluetooth_on", "0") not in ("0", "")

    def _go_up(self) -> None:
        """Classic on from wherever the adapter is (a no-op when on or turning on)."""
        now = self._raw_state()
        if now in ("ON", "TURNING_ON"):
            return
        if now == "BLE_ON":
            self._start(_UP_FROM_BLE_ON, "ON", self.TURN_ON_S * 0.5)
        else:
            self._start(_UP_FROM_OFF, "ON", self.TURN_ON_S)
        self._enabled_at = self._since
        if self.phone.sdk < PERSIST_ON_REQUEST_SINCE_SDK:  # leaving BLE_ON for TURNING_ON
            self._persist("1", self._leg_end("BLE_ON") if now != "BLE_ON" else 0.0)

    def _go_down(self) -> None:
        """Classic off: down to BLE_ON while a BLE app is registered, else to OFF."""
        now = self._raw_state()
        keep_ble = bool(self.ble_apps)
        if now in ("ON", "TURNING_ON"):
            legs, rest = (_DOWN_TO_BLE_ON, "BLE_ON") if keep_ble else (_DOWN_TO_OFF, "OFF")
            self._start(legs, rest, self.TURN_OFF_S)
        elif now in ("BLE_ON", "BLE_TURNING_ON") and not keep_ble:
            self._start(_BLE_DOWN, "OFF", self.TURN_OFF_S * 0.5)

    def _request(self, enable: bool, package: str, reason: str = "APPLICATION_REQUEST") -> bool:
        with self.phone.lock:
            if not self.present:
                return False
            self.settle()
            self.log.append(EnableLogEntry(time.time(), enable, package, reason))
            self._enable_external = enable
            if enable:
                if self.phone.sdk >= PERSIST_ON_REQUEST_SINCE_SDK:
                    self._persist("1")
                self._go_up()
            else:
                self._persist("0")  # disable(persist=true)
                self._go_down()
            return True

    def request_enable(self, package: str = "com.android.shell") -> bool:
        """Start turning on; False when there is no adapter. Returns at once (async)."""
        return self._request(True, package)

    def request_disable(self, package: str = "com.android.shell") -> bool:
        """Start turning off; False when there is no adapter."""
        return self._request(False, package)

    # ---- BLE-only mode -------------------------------------------------------------------

    def _airplane_on(self) -> bool:
        return self.phone.settings.tables["global"].get("airplane_mode_on", "0") != "0"

    def _ble_scan_always(self) -> bool:
        return self.phone.settings.tables["global"].get("ble_scan_always_enabled", "0") != "0"

    def register_ble_app(self, package: str = GMS) -> bool:
        """``BluetoothAdapter.enableBLE()`` from ``package``: refused unless BLE scanning is
        on and airplane mode off; brings an OFF adapter up to BLE_ON."""
        with self.phone.lock:
            if not self.present or not self._ble_scan_always() or self._airplane_on():
                return False
            self.settle()
            if package not in self.ble_apps:
                self.ble_apps.append(package)
            if self._raw_state() in ("OFF", "BLE_TURNING_OFF"):
                self._start(_BLE_UP, "BLE_ON", self.TURN_ON_S * 0.5)
            return True

    def unregister_ble_app(self, package: str = GMS) -> bool:
        """``disableBLE()``: the last app gone, a BLE_ON adapter with classic off stops."""
        with self.phone.lock:
            if package in self.ble_apps:
                self.ble_apps.remove(package)
            if not self.ble_apps and self._raw_state() in ("BLE_ON", "BLE_TURNING_ON"):
                self._start(_BLE_DOWN, "OFF", self.TURN_OFF_S * 0.5)
            return True

    def _clear_ble_apps(self) -> None:
        self.ble_apps.clear()
        if self._raw_state() in ("BLE_ON", "BLE_TURNING_ON"):
            self._start(_BLE_DOWN, "OFF", self.TURN_OFF_S * 0.5)

    def _on_ble_scan_setting(self, key: str, value: str | None) -> None:
        with self.phone.lock:
            if value in (None, "0"):
                self.settle()
                self._clear_ble_apps()

    def _on_airplane_mode(self, key: str, value: str | None) -> None:
        """handleAirplaneModeChanged: persist 2/1, then turn off or back on."""
        with self.phone.lock:
            if not self.present:
                return
            self.settle()
            on = value not in (None, "0")
            if self._persisted_on():
                self._persist("2" if on else "1")
            if on:
                self._clear_ble_apps()
                if self._raw_state() in ("ON", "TURNING_ON"):
                    self.log.append(EnableLogEntry(time.time(), False, "android", "AIRPLANE_MODE"))
                    self._start(_DOWN_TO_OFF, "OFF", self.TURN_OFF_S)
            elif self._enable_external:
                self.log.append(EnableLogEntry(time.time(), True, "android", "AIRPLANE_MODE"))
                self._go_up()

    @property
    def m_enable(self) -> bool:
        """The manager's ``mEnable``: set by any enable (BLE-only too), cleared by disable."""
        return self._rest != "OFF"

    def since_enabled_ms(self) -> int:
        return int((self.phone.now() - self._enabled_at) * 1000)


def _cant_find(io: ToolIO, kind: str) -> int:
    """The service manager's "Can't find service" reply (services/base_tools.py prints it)."""
    base_tools = importlib.import_module("phoned.sim.shell.tools.base_tools")
    return int(base_tools.cant_find_service(io, kind, "bluetooth_manager"))


# ---- dumpsys bluetooth_manager ------------------------------------------------------------


def _duration(ms: int) -> str:
    return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def _log_time(wall: float, millis: bool) -> str:
    stamp = time.strftime("%m-%d %H:%M:%S", time.localtime(wall))
    return f"{stamp}.{int(wall * 1000) % 1000:03d}" if millis else stamp


def _old_log_line(entry: EnableLogEntry) -> str:
    verb = "  Enabled " if entry.enable else " Disabled "
    return f"  {_log_time(entry.wall, False)}{verb}by {entry.package}"


def _new_log_line(entry: EnableLogEntry) -> str:
    verb = "Enable" if entry.enable else "Disable"
    return (
        f"  {_log_time(entry.wall, True)} \tPackage [{entry.package}] requested to "
        f"[{verb}]. \tReason is {entry.reason}"
    )


def _status_block(adapter: BluetoothAdapter, masked: bool) -> list[str]:
    state = adapter.state_text_override or adapter.state
    name = adapter.phone.settings.get("secure", "bluetooth_name") or ""
    address = "XX:XX:XX:XX" + ADDRESS[11:] if masked else ADDRESS
    lines = [
        "Bluetooth Status",
        f"  enabled: {str(state == 'ON').lower()}",
        f"  state: {state}",
        f"  address: {address}",
        f"  name: {name}",
    ]
    if adapter.m_enable:
        lines.append(f"  time since enabled: {_duration(adapter.since_enabled_ms())}")
    return lines


def dump_bluetooth_manager(adapter: BluetoothAdapter) -> str:
    """``dumpsys bluetooth_manager`` head in that SDK's layout."""
    modern = adapter.phone.sdk >= SHELL_COMMAND_SINCE_SDK
    lines = _status_block(adapter, masked=modern)
    if not adapter.log:
        lines += ["", "Bluetooth never enabled!"]
    else:
        fmt = _new_log_line if modern else _old_log_line
        lines += ["", "Enable log:", *(fmt(e) for e in adapter.log)]
    lines += ["", "Bluetooth crashed 0 times", ""]
    if modern:
        lines += [
            f"Number of Ble app registered: {len(adapter.ble_apps)}",
            "",
            "BluetoothManagerService:",
            f"  mEnable:{str(adapter.m_enable).lower()}",
            "  mQuietEnable:false",
            f"  mEnableExternal:{str(adapter._enable_external).lower()}",
            "  mQuietEnableExternal:false",
        ]
    else:
        count = len(adapter.ble_apps)
        lines.append(f"{count} BLE app{'' if count == 1 else 's'}registered")
        lines += [f"  {package}" for package in adapter.ble_apps]
    return "\n".join(lines) + "\n\n"


@service("dumpsys", "bluetooth_manager")
def dumpsys_bluetooth_manager(io: ToolIO, argv: list[str]) -> int:
    """``dumpsys bluetooth_manager``: the manager's status and history."""
    bluetooth = io.phone.service(BluetoothAdapter)
    if not bluetooth.present:
        return _cant_find(io, "dumpsys")
    with io.phone.lock:
        io.out(dump_bluetooth_manager(bluetooth))
    return 0


# ---- cmd bluetooth_manager ----------------------------------------------------------------

_HELP_33 = {
    "enable": "  enable\n    Enable Bluetooth on this device.\n",
    "enableBle": "  enableBle\n    Call enableBle to activate ble only mode on this device.\n",
    "disable": "  disable\n    Disable Bluetooth on this device.\n",
    "disableBle": (
        "  disableBle\n    revoke the call to enableBle. No-op if enableBle wasn't call before\n"
    ),
    "wait-for-state": (
        "  wait-for-state:<STATE>\n    Wait until the adapter state is <STATE>. <STATE> can be "
        "one of STATE_OFF | STATE_ON\n    Note: This command can timeout and failed\n"
    ),
}


def bluetooth_manager_help(sdk: int) -> str:
    """BluetoothShellCommand.printHelp; enableBle/disableBle listed from API 34."""
    names = ["enable", "disable", "wait-for-state"]
    if sdk >= 34:
        names = ["enable", "enableBle", "disable", "disableBle", "wait-for-state"]
    head = "Bluetooth Manager Commands:\n  help or -h\n    Print this help text.\n"
    return head + "".join(_HELP_33[n] for n in names)


def _wait_for_state(io: ToolIO, wanted: str) -> int:
    adapter = io.phone.service(BluetoothAdapter)
    deadline = time.monotonic() + max(adapter.TURN_ON_S, adapter.TURN_OFF_S) + 1.0
    while time.monotonic() < deadline and not io.cancelled.is_set():
        if f"STATE_{adapter.state}" == wanted:
            return 0
        time.sleep(0.02)
    return -1


def _run_bt_command(io: ToolIO, cmd: str) -> int:
    adapter = io.phone.service(BluetoothAdapter)
    if cmd == "enable":
        return 0 if adapter.request_enable() else -1
    if cmd == "disable":
        return 0 if adapter.request_disable() else -1
    return _wait_for_state(io, cmd.partition(":")[2])


def _is_bt_command(cmd: str, sdk: int) -> bool:
    if cmd in _PRIVILEGED:
        return sdk >= ENABLE_BLE_SINCE_SDK
    return cmd in ("enable", "disable") or cmd.startswith("wait-for-state:")


_PRIVILEGED = ("enableBle", "disableBle")  # BluetoothCommand(isPrivileged=true): root only
SHELL_UID = 2000  # adb shell runs as the shell user


def _security_exception(io: ToolIO, cmd: str) -> int:
    """BluetoothShellCommand.onCommand throws for a non-root uid; BasicShellCommandHandler
    prints the exception after an empty line and exits with its ``res = -1``."""
    io.err(
        f"\nException occurred while executing '{cmd}':\n"
        f"java.lang.SecurityException: Uid {SHELL_UID} does not have access to {cmd} "
        "bluetooth command\n"
        "\tat com.android.server.bluetooth.BluetoothShellCommand.onCommand"
        "(BluetoothShellCommand.java)\n"
    )
    return 255


@service("cmd", "bluetooth_manager")
def cmd_bluetooth_manager(io: ToolIO, argv: list[str]) -> int:
    """``cmd bluetooth_manager enable|disable|wait-for-state:STATE_X`` (API 33+);
    ``enableBle``/``disableBle`` (API 34+) refuse the shell user."""
    phone = io.phone
    if not phone.service(BluetoothAdapter).present:
        return _cant_find(io, "cmd")
    if phone.sdk < SHELL_COMMAND_SINCE_SDK:
        io.err("No shell command implementation.\n")
        return 0
    cmd = argv[1] if len(argv) > 1 else None
    if cmd is None or cmd in ("help", "-h"):
        io.out(bluetooth_manager_help(phone.sdk))
        return 255
    if not _is_bt_command(cmd, phone.sdk):
        io.out(f"Unknown command: {cmd}\n")
        return 255
    if cmd in _PRIVILEGED:
        return _security_exception(io, cmd)
    io.out(f"BluetoothShellCommand: Exec {cmd}\n")
    ret = _run_bt_command(io, cmd)
    if ret == 0:
        io.out(f"{cmd}: Success\n")
        return 0
    io.err(f"BluetoothShellCommand: {cmd}: Failed with status={ret}\n")
    return ret & 0xFF


# ---- svc bluetooth ------------------------------------------------------------------------

_SVC_LONG_HELP = "Control Bluetooth service\n\nusage: svc bluetooth [enable|disable]\n" + (
    "         Turn Bluetooth on or off.\n\n"
)
_SVC_SCRIPT_HELP = (
    "Control the Bluetooth manager\n\nusage: svc bluetooth [enable|disable]\n"
    "         Turn Bluetooth on or off.\n\n"
)


def _svc_jar(io: ToolIO, argv: list[str]) -> int:
    """svc.jar BluetoothCommand (API <= 32): always exit 0."""
    adapter = io.phone.service(BluetoothAdapter)
    if not adapter.present:
        io.err("Got a null BluetoothAdapter, is the system running?\n")
        return 0
    verb = argv[1] if len(argv) == 2 else None
    if verb == "enable":
        adapter.request_enable()
    elif verb == "disable":
        adapter.request_disable()
    else:
        io.err(_SVC_LONG_HELP + "\n")
    return 0


@service("svc", "bluetooth")
def svc_bluetooth(io: ToolIO, argv: list[str]) -> int:
    """``svc bluetooth enable|disable`` as the release's svc implements it."""
    if io.phone.sdk < SHELL_COMMAND_SINCE_SDK:
        return _svc_jar(io, argv)
    verb = argv[1] if len(argv) > 1 else ""
    if verb in ("enable", "disable"):
        return cmd_bluetooth_manager(io, ["bluetooth_manager", verb])
    io.out(_SVC_SCRIPT_HELP)
    return 1


SIM_SERVICE = SimService("bluetooth", BluetoothAdapter)  # phone.service(BluetoothAdapter)
