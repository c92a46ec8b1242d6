"""One connected phone: shell calls, identity, capabilities, and its UI session.

``connect()`` resolves which device is meant (an explicit serial, ``$ANDROID_SERIAL``, or
the only attached device) and checks that it is usable. Identity and capabilities (the
declared probes of ``device/probes.py``) are read once per ``Device`` and cached.
``read()`` retries transient transport errors (a read has no effect, so repeating it is
safe); ``run()`` never retries, because repeating a command with an effect is the
caller's decision after it has reconciled the outcome. ``ui_session`` is the
phone's one uiautomator2 session (``device/ui_session.py``), created on first use and kept
for the life of the ``Device``: the daemon keeps one ``Device`` per phone, so the session
stays warm across tasks; ``close()`` stops it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from phoned.device import commands, parsers, probes
from phoned.device.adb import AdbServer, ShellResult, quote_argv
from phoned.device.errors import (
    AdbServerError,
    DeviceNotFound,
    DeviceOffline,
    DeviceUnauthorized,
)
from phoned.device.probes import Capabilities
from phoned.device.translate import translate
from phoned.device.ui_session import UiMode, UiSession

if TYPE_CHECKING:
    import adbutils
    from phoned.device.ui_session import UiMode, UiSession

DEFAULT_TIMEOUT = 10.0


@dataclass(frozen=True)
class DeviceIdentity:
    """Who the phone is, as its system properties say."""

    serial: str
    model: str
    manufacturer: str
    sdk: int
    release: str
    fingerprint: str
    # the language the phone speaks (BCP 47, e.g. ``ru-RU``): ``persist.sys.locale`` (what
    # Settings wrote), else ``ro.product.locale`` (the factory default), the order AOSP's
    # AndroidRuntime.cpp ``readLocale`` reads them in; "" when neither is set
    locale: str = ""
    # the country numbers are read in (ISO 3166, ``RU``): the SIM's, else the network's, else
    # the locale's (``parsers.phone_region``; ``device/phone_numbers.py``); "" when none says
    region: str = ""

    def to_json(self) -> dict[str, Any]:
        """Every field by its name: the record is its own JSON form."""
        return asdict(self)


def _is_transient(exc: BaseException) -> bool:
    return isinstance(exc, (DeviceOffline, AdbServerError)) and not isinstance(
        exc, DeviceUnauthorized
    )


class Device:
    """A phone reached through the adb server by its serial."""

    def __init__(self, serial: str, server: AdbServer, ui_mode: UiMode | None = None) -> None:
        self.serial = serial
        self.server = server
        self.ui_mode = ui_mode  # None: uiautomator2 with the shell fallback (UiMode.AUTO)
        self._lock = threading.Lock()
        self._features: frozenset[str] | None = None
        self._identity: DeviceIdentity | None = None
        self._capabilities: Capabilities | None = None
        self._ui_session: UiSession | None = None

    def __repr__(self) -> str:
        return f"Device({self.serial!r})"

    # -- shell -------------------------------------------------------------------------
    def run(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> ShellResult:
        """Run ``argv`` once (no retry): for commands with an effect."""
        command = quote_argv(argv)
        if self.features and "shell_v2" not in self.features:
            return self.server.shell_v1(self.serial, command, timeout)
        return self.server.shell(self.serial, command, timeout)

    def read(
        self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT, attempts: int = 3
    ) -> ShellResult:
        """Run a read-only ``argv``; transient transport errors are retried with backoff."""
        # lazy: tenacity is loaded only by the verbs that use it (start-up)
        from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

        retrying = Retrying(
            retry=retry_if_exception(_is_transient),
            stop=stop_after_attempt(attempts),
            wait=wait_exponential(multiplier=0.1, max=1.0),
            reraise=True,
        )
        for attempt in retrying:
            with attempt:
                return self.run(argv, timeout)
        raise AssertionError("unreachable")  # pragma: no cover - Retrying reraises

    # -- cached facts --------------------------------------------------------------------
    @property
    def features(self) -> frozenset[str]:
        """The transport features the device advertised (``shell_v2``, ``cmd``, ...)."""
        if self._features is None:
            try:
                text = self.server.client.device(self.serial).get_features()
            except Exception as exc:
                raise translate(exc, self.serial) from exc
            self._features = parsers.parse_features(text)
        return self._features

    @property
    def identity(self) -> DeviceIdentity:
        if self._identity is None:
            text = self.read(commands.GETPROP_ALL).stdout
            props = parsers.parse_getprop(text)
            self._identity = DeviceIdentity(
                serial=self.serial,
                model=props.get("ro.product.model", ""),
                manufacturer=props.get("ro.product.manufacturer", ""),
                sdk=int(props.get("ro.build.version.sdk", "0") or 0),
                release=props.get("ro.build.version.release", ""),
                fingerprint=props.get("ro.build.fingerprint", ""),
                locale=parsers.phone_locale(text),
                region=parsers.phone_region(text),
            )
        return self._identity

    @property
    def sdk(self) -> int:
        return self.identity.sdk

    @property
    def capabilities(self) -> Capabilities:
        """Every declared probe's result (``device/probes.py``), each probed once; a probe
        declared after the first look (a method module imported later) runs on the next."""
        wanted = probes.declared()
        with self._lock:
            known = self._capabilities
        if known is None or len(known) < len(wanted):
            known = probes.run(self, wanted, known)
            with self._lock:
                self._capabilities = known
        return known

    # -- adbutils and uiautomator2 -------------------------------------------------------
    @property
    def adb(self) -> adbutils.AdbDevice:
        """The adbutils device (sync, forwards, file transfer)."""
        return self.server.client.device(self.serial)

    @property
    def ui_session(self) -> UiSession:
        """This phone's UI session (created on first use; nothing starts until it is used)."""
        with self._lock:
            if self._ui_session is None:
                self._ui_session = UiSession(self, self.ui_mode or UiMode.AUTO)
            return self._ui_session

    def close(self) -> None:
        """Stop the UI session's server, if one runs (the phone may already be gone)."""
        with self._lock:
            session = self._ui_session
        if session is not None:
            session.close()


def connect(serial: str | None = None, server: AdbServer | None = None) -> Device:
    """The device meant by ``serial``, ``$ANDROID_SERIAL`` or the only attached device.

    Starts the adb server if none runs. Raises ``DeviceNotFound``, ``DeviceUnauthorized``,
    ``DeviceOffline`` or ``AdbServerError`` with a message that says what to do.
    """
    server = server or AdbServer()
    server.ensure_running()
    serial = serial or os.environ.get("ANDROID_SERIAL") or None
    states = list_devices(server)
    if serial is None:
        usable = [s for s, state in states.items() if state == "device"]
        if not states:
            raise DeviceNotFound("no device attached (check the cable and `adb devices`)")
        if len(states) > 1:
            raise DeviceNotFound(
                f"{len(states)} devices attached ({', '.join(sorted(states))}); name one with --serial"
            )
        serial = usable[0] if usable else next(iter(states))
    state = states.get(serial)
    _check_state(serial, state)
    return Device(serial, server)


def _check_state(serial: str, state: str | None) -> None:
    if state is None:
        raise DeviceNotFound(f"device {serial} not found", serial=serial)
    if state == "unauthorized":
        raise DeviceUnauthorized(f"device {serial} is unauthorized", serial=serial)
    if state != "device":
        raise DeviceOffline(f"device {serial} is {state}", serial=serial)


def list_devices(server: AdbServer) -> dict[str, str]:
    """Every device the adb server knows, with its state (device, offline, unauthorized...)."""
    try:
        return {info.serial: info.state for info in server.client.list()}
    except Exception as exc:
        raise translate(exc, None) from exc
