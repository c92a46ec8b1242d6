"""Bluetooth adapter model with asynchronous TURNING_ON/TURNING_OFF; ``cmd bluetooth_manager``,
``svc bluetooth``, ``dumpsys bluetooth_manager``.

Sources:

* ``BluetoothManagerService.dump`` (frameworks/base/services/core, Android 9-12; then
  packages/modules/Bluetooth/service): ``Bluetooth Status`` / ``enabled`` / ``state`` /
  ``address`` / ``name`` / ``time since enabled`` (only while enabled, ``%02d:%02d:%02d.%03d``),
  then the enable log and crash count. Android 9-12 print the full address and
  ``N BLE apps registered`` (sic, no space); the module (13+) masks the address
  (``XX:XX:XX:XX:82:10``), logs ``Package [pkg] requested to [Enable]. \\tReason is X`` and
  prints ``Number of Ble app registered: N`` and a ``BluetoothManagerService:`` block (captured
  Galaxy A21s dump, find_string id 59229681066).
* ``BluetoothShellCommand`` (API 33+): ``BluetoothShellCommand: Exec enable`` then
  ``enable: Success``. Below 33 the binder has no shell command: Binder.onShellCommand prints
  ``No shell command implementation.`` to stderr and exits 0.
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

from device.sim.registry import ToolIO, service

if TYPE_CHECKING:
    from device.sim.phone import Phone

SHELL_COMMAND_SINCE_SDK = 33
ADDRESS = "F8:0F:F9:3A:82:10"


@dataclass(frozen=True)
class EnableLogEntry:
    """One line of the manager's enable/disable history."""

    wall: float  # time.time() when requested
    enable: bool
    package: str
    reason: str


class BluetoothAdapter:
    """OFF -> TURNING_ON -> ON -> TURNING_OFF -> OFF, computed from ``phone.now()``.

    ``bluetooth_on`` (global) is written by the manager once a transition completes.
    """

    TURN_ON_S = 1.0  # tests shorten these
    TURN_OFF_S = 0.5

    def __init__(self, phone: Phone) -> None:
        self.phone = phone
        self._target_on = phone.settings.get("global", "bluetooth_on") == "1"
        self._since = float("-inf")
        self._enabled_at = phone.now()
        self._persisted = True
        self.log: list[EnableLogEntry] = []

    @property
    def present(self) -> bool:
        return not self.phone.faults.no_bluetooth

    def _raw_state(self) -> str:
        elapsed = self.phone.now() - self._since
        if self._target_on:
            return "ON" if elapsed >= self.TURN_ON_S else "TURNING_ON"
        return "OFF" if elapsed >= self.TURN_OFF_S else "TURNING_OFF"

    def settle(self) -> None:
        """Persist ``bluetooth_on`` once the running transition has completed."""
        with self.phone.lock:
            if not self._persisted and self._raw_state() in ("ON", "OFF"):
                value = "1" if self._target_on else "0"
                self.phone.settings.put("global", "bluetooth_on", value, notify=False)
                self._persisted = True

    @property
    def state(self) -> str:
        """OFF, TURNING_ON, ON or TURNING_OFF (BluetoothAdapter.nameForState without STATE_)."""
        self.settle()
        return self._raw_state()

    @property
    def enabled(self) -> bool:
        """BluetoothAdapter.isEnabled(): true only in state ON."""
        return self.state == "ON"

    def _request(self, enable: bool, package: str) -> bool:
        with self.phone.lock:
            if not self.present:
                return False
            self.settle()
            self.log.append(EnableLogEntry(time.time(), enable, package, "APPLICATION_REQUEST"))
            if self._target_on == enable:
                return True
            self._target_on = enable
            self._since = self.phone.now()
            self._persisted = False
            if enable:
                self._enabled_at = self._since
            return True

    def request_enable(self, package: str = "com.android.shell") -> bool:
        """Start turning on; False when there is no adapter. Returns at once (async)."""
        return self._request(True, package)

    def request_disable(self, package: str = "com.android.shell") -> bool:
        """Start turning off; False when there is no adapter."""
        return self._request(False, package)

    def since_enabled_ms(self) -> int:
        return int((self.phone.now() - self._enabled_at) * 1000)


def _cant_find(io: ToolIO, kind: str) -> int:
    """The service manager's "Can't find service" reply (services/base_tools.py prints it)."""
    base_tools = importlib.import_module("device.sim.services.base_tools")
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
    state = adapter.state
    name = adapter.phone.settings.get("secure", "bluetooth_name") or ""
    address = "XX:XX:XX:XX" + ADDRESS[11:] if masked else ADDRESS
    lines = [
        "Bluetooth Status",
        f"  enabled: {str(state == 'ON').lower()}",
        f"  state: {state}",
        f"  address: {address}",
        f"  name: {name}",
    ]
    if adapter._target_on:  # mEnable
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
        on = str(adapter._target_on).lower()
        lines += [
            "Number of Ble app registered: 0",
            "",
            "BluetoothManagerService:",
            f"  mEnable:{on}",
            "  mQuietEnable:false",
            f"  mEnableExternal:{on}",
            "  mQuietEnableExternal:false",
        ]
    else:
        lines.append("0 BLE appsregistered")
    return "\n".join(lines) + "\n\n"


@service("dumpsys", "bluetooth_manager")
def dumpsys_bluetooth_manager(io: ToolIO, argv: list[str]) -> int:
    """``dumpsys bluetooth_manager``: the manager's status and history."""
    if not io.phone.bluetooth.present:
        return _cant_find(io, "dumpsys")
    with io.phone.lock:
        io.out(dump_bluetooth_manager(io.phone.bluetooth))
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
    adapter = io.phone.bluetooth
    deadline = time.monotonic() + max(adapter.TURN_ON_S, adapter.TURN_OFF_S) + 1.0
    while time.monotonic() < deadline and not io.cancelled.is_set():
        if f"STATE_{adapter.state}" == wanted:
            return 0
        time.sleep(0.02)
    return -1


def _run_bt_command(io: ToolIO, cmd: str) -> int:
    adapter = io.phone.bluetooth
    if cmd == "enable":
        return 0 if adapter.request_enable() else -1
    if cmd == "disable":
        return 0 if adapter.request_disable() else -1
    return _wait_for_state(io, cmd.partition(":")[2])


def _is_bt_command(cmd: str) -> bool:
    return cmd in ("enable", "disable") or cmd.startswith("wait-for-state:")


@service("cmd", "bluetooth_manager")
def cmd_bluetooth_manager(io: ToolIO, argv: list[str]) -> int:
    """``cmd bluetooth_manager enable|disable|wait-for-state:STATE_X`` (API 33+)."""
    phone = io.phone
    if not phone.bluetooth.present:
        return _cant_find(io, "cmd")
    if phone.sdk < SHELL_COMMAND_SINCE_SDK:
        io.err("No shell command implementation.\n")
        return 0
    cmd = argv[1] if len(argv) > 1 else None
    if cmd is None or cmd in ("help", "-h"):
        io.out(bluetooth_manager_help(phone.sdk))
        return 255
    if not _is_bt_command(cmd):
        io.out(f"Unknown command: {cmd}\n")
        return 255
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
    adapter = io.phone.bluetooth
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
