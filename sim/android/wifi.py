"""Wi-Fi radio model; ``cmd wifi``, ``svc wifi``, ``dumpsys wifi``.

Sources:

* ``cmd wifi set-wifi-enabled enabled|disabled``: WifiShellCommand (frameworks/opt/net/wifi,
  read in LineageOS/android_frameworks_opt_net_wifi, Android 11): a non-privileged command
  that calls ``WifiServiceImpl.setWifiEnabled("com.android.shell", enabled)``, prints nothing
  and exits 0; any other word fails ``getNextArgRequiredTrueOrFalse``. Before Android 11 the
  handler has no such command: BasicShellCommandHandler prints ``Unknown command: NAME`` and
  exits -1 (255).
* ``svc wifi enable|disable``: cmds/svc WifiCommand.java, silent, exit 0; Svc.java lists
  ``wifi`` until Android 11 (``base_tools._svc_commands``), later ``svc wifi`` prints the help.
* ``dumpsys wifi``: WifiServiceImpl.dump starts with ``Wi-Fi is <state>`` (WIFI_STATE_* by
  name) and ``Stay-awake conditions: N``.
* ``wifi_on`` (Settings.Global): WifiSettingsStore.handleWifiToggled persists 1/0 when the
  toggle is accepted, before the radio has changed; the radio then passes ``enabling`` /
  ``disabling``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from phoned.sim.shell.registry import SimService, ToolIO, dumpsys_of, service
from phoned.sim.shell.tools.base_tools import _svc_help

if TYPE_CHECKING:
    from phoned.sim.phone_state import PhoneState

SET_WIFI_ENABLED_SINCE_SDK = 30
SVC_WIFI_UNTIL_SDK = 30


class WifiRadio:
    """The radio's state word and the transition under way (settled on every read)."""

    TRANSITION_S = 0.2  # enabling/disabling before the radio settles

    def __init__(self, phone: PhoneState) -> None:
        self.phone = phone
        self._target: str | None = None
        self._until = 0.0

    @property
    def state(self) -> str:
        """``enabled``, ``disabled``, ``enabling`` or ``disabling``."""
        on = self.phone.settings.tables["global"].get("wifi_on", "0") in ("1", "2")
        settled = "enabled" if on else "disabled"
        if self._target is None or self.phone.now() >= self._until:
            self._target = None
            return settled
        return "enabling" if self._target == "enabled" else "disabling"

    def request(self, enable: bool) -> None:
        """WifiServiceImpl.setWifiEnabled: persist ``wifi_on`` now, change the radio later."""
        if (self.state == "enabled") == enable and self._target is None:
            return
        self.phone.settings.put("global", "wifi_on", "1" if enable else "0")
        self._target = "enabled" if enable else "disabled"
        self._until = self.phone.now() + self.TRANSITION_S

    def dump(self) -> str:
        stay = self.phone.settings.get("global", "stay_on_while_plugged_in") or "0"
        return (
            f"Wi-Fi is {self.state}\nStay-awake conditions: {stay}\n"
            "mMulticastEnabled 0\nmMulticastDisabled 0\nmInIdleMode false\nmScanPending false\n"
        )


@service("cmd", "wifi")
def cmd_wifi(io: ToolIO, argv: list[str]) -> int:
    """``cmd wifi set-wifi-enabled enabled|disabled`` (API 30+)."""
    sub = argv[1] if len(argv) > 1 else "help"
    if sub != "set-wifi-enabled" or io.phone.sdk < SET_WIFI_ENABLED_SINCE_SDK:
        io.out(f"Unknown command: {sub}\n")
        return 255
    word = argv[2] if len(argv) > 2 else ""
    if word not in ("enabled", "disabled"):
        io.err(f"Error: expected enabled or disabled but got '{word}'\n")
        return 255
    with io.phone.lock:
        io.phone.service(WifiRadio).request(word == "enabled")
    return 0


@service("svc", "wifi")
def svc_wifi(io: ToolIO, argv: list[str]) -> int:
    """``svc wifi enable|disable`` (API <= 30; later releases print svc's help)."""

    if io.phone.sdk > SVC_WIFI_UNTIL_SDK:
        return _svc_help(io)
    if len(argv) > 1 and argv[1] in ("enable", "disable"):
        with io.phone.lock:
            io.phone.service(WifiRadio).request(argv[1] == "enable")
        return 0
    io.err("Control the Wi-Fi manager\n\nusage: svc wifi [enable|disable]\n")
    return 0


dumpsys_wifi = service("dumpsys", "wifi")(dumpsys_of(WifiRadio))  # the state line first


SIM_SERVICE = SimService("wifi", WifiRadio)  # phone.service(WifiRadio)
