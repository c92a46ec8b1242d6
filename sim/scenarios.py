"""Named scenarios for ``phoned sim --scenario``: faults and starting states, comma-separated.

``locked``, ``screen-off``, ``no-bluetooth``, ``ble-scanning`` (Bluetooth off rests in
BLE_ON), ``bt-airplane`` (airplane mode turned on over Bluetooth on), ``dnd-noop``,
``unauthorized``, ``slow:MS``,
``drop-after:N``, ``drop-at:POINT``, ``permission-dialog:PACKAGE``, ``ui-dump-not-idle``
(the idle error, no file written, a stale ``window_dump.xml`` left from before),
``ui-dump-killed``, ``u2-broken`` (the uiautomator2 server aborts at launch),
``u2-dies-after:N`` (it dies after N calls), ``u2-left-running`` (the server outlives
its shell stream and keeps UiAutomation until it is killed), ``debuggable:PKG`` (``run-as PKG``
works: the app is a debuggable build), ``app-disabled:PKG`` (what ``pm disable-user PKG``
leaves), ``locale:TAG`` (the owner's language, ``persist.sys.locale``), ``sim-country:CC[/CC]``
(the SIM's and network's country, one per slot), ``ui-costs:none|measured`` (the UI cost model,
``ui/automation.py``; measured by default), ``second-display`` (a
cast screen without focus is listed before the default display in ``dumpsys window
displays``), ``chat-send[:stuck|:fail]`` (Messages sends as a chat/RCS message: nothing in
``content://sms``, only the conversation shows it: delivered, stuck sending, or not sent),
``inject-denied`` (a Xiaomi phone without "USB debugging (Security settings)": ``input``
keys and taps are refused with a SecurityException), ``work-profile:PACKAGE`` (that app runs
as user 10: ``u10`` in window and activity records), ``samsung-power`` (``dumpsys power``
prints ``getWakefulnessLocked()=`` instead of ``mWakefulness=``),
``samsung-messages[:dual]`` (Samsung Messages, ``sim/variants/samsung.py``),
``google-messages[:views|compose|compose-rcs]`` (the generation of Google Messages'
conversation screen, ``sim/variants/google_messages.py``), ``aosp-messaging``,
``contact:NAME=NUMBER[:TYPE][:new]`` (repeatable: the address book holds NAME with NUMBER,
TYPE a ``ContactsContract.CommonDataKinds.Phone`` type code or its name, ``mobile`` (2) by
default; NAME may hold spaces, Cyrillic or Hangul but no comma; the same NAME again adds a
number to that contact, ``:new`` makes another contact of the same NAME:
``contact:Анна Иванова=+79161234567,contact:김민준=010-1234-5678:home,
contact:Ivan Petrov=+79160000001:mobile,contact:Ivan Petrov=+79160000002:work:new``),
``notification:PKG=TITLE|TEXT`` (repeatable: PKG has posted a notification with that title
and text, id 1, 2, ... per package in order, posted a minute apart, the first ten minutes
before the phone starts; TITLE and TEXT may hold spaces, Cyrillic, Hangul or emoji but no comma:
``notification:org.telegram.messenger=Анна|Привет 👋,notification:com.kakao.talk=김민준|안녕하세요``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from phoned.android_data.contacts import PhoneType
from phoned.sim.android.contacts import ContactsProvider
from phoned.sim.android.notification import NotificationService
from phoned.sim.phone import Phone
from phoned.sim.ui.automation import UiCosts
from phoned.sim.variants import variants


def _locked(phone: Phone, _: str) -> None:
    phone.ui.locked = True


def _screen_off(phone: Phone, _: str) -> None:
    phone.ui.screen_on = False


def _no_bluetooth(phone: Phone, _: str) -> None:
    phone.faults.no_bluetooth = True


def _ble_scanning(phone: Phone, _: str) -> None:
    """With "Bluetooth scanning" on and Play services scanning, off rests in BLE_ON."""
    phone.settings.put("global", "ble_scan_always_enabled", "1")
    phone.bluetooth.register_ble_app()
    phone.bluetooth.settle_now()


def _bt_airplane(phone: Phone, _: str) -> None:
    """Bluetooth was on when airplane mode turned on: OFF with ``bluetooth_on`` 2."""
    phone.bluetooth.request_enable("android")
    phone.bluetooth.settle_now()
    phone.settings.put("global", "airplane_mode_on", "1")
    phone.bluetooth.settle_now()


def _dnd_noop(phone: Phone, _: str) -> None:
    phone.faults.dnd_noop = True


def _unauthorized(phone: Phone, _: str) -> None:
    phone.faults.unauthorized = True


def _slow(phone: Phone, value: str) -> None:
    phone.faults.slow_ms = int(value or "200")


def _drop_after(phone: Phone, value: str) -> None:
    phone.faults.drop_after_commands = int(value)


def _drop_at(phone: Phone, value: str) -> None:
    if not value:
        raise ValueError("drop-at needs a point, e.g. drop-at:sms.after_send_tap")
    phone.faults.drop_at = value


def _second_display(phone: Phone, _: str) -> None:
    phone.ui.second_display = (1920, 1080)


def _ui_dump_not_idle(phone: Phone, _: str) -> None:
    """``uiautomator dump`` never sees an idle screen; a stale dump file is already there."""
    phone.ui.automation.faults.dump_not_idle = True
    stale = phone.ui.hierarchy_xml(u2=False).encode("utf-8")
    phone.fs.write("/sdcard/window_dump.xml", stale)


def _ui_dump_killed(phone: Phone, _: str) -> None:
    phone.ui.automation.faults.dump_killed = True


def _u2_broken(phone: Phone, _: str) -> None:
    phone.ui.automation.faults.u2_broken = True


def _u2_left_running(phone: Phone, _: str) -> None:
    phone.ui.automation.faults.u2_left_running = True


def _u2_dies_after(phone: Phone, value: str) -> None:
    phone.ui.automation.faults.u2_dies_after = int(value)


def _ui_costs(phone: Phone, value: str) -> None:

    if value not in ("none", "measured"):
        raise ValueError("ui-costs takes none or measured")
    phone.ui.automation.costs = UiCosts.none() if value == "none" else UiCosts()


def _chat_send(phone: Phone, value: str) -> None:
    outcomes = {"": "chat", "stuck": "chat-stuck", "fail": "chat-fail"}
    if value not in outcomes:
        raise ValueError("chat-send takes no value, stuck or fail")
    phone.ui.chat_send = outcomes[value]


def _debuggable(phone: Phone, value: str) -> None:
    if not value:
        raise ValueError("debuggable needs a package, e.g. debuggable:com.example.notes")
    phone.packages.debuggable.add(value)


def _work_profile(phone: Phone, value: str) -> None:
    if not value:
        raise ValueError("work-profile needs a package, e.g. work-profile:com.android.settings")
    phone.ui.work_profile_apps.add(value)


def _locale(phone: Phone, value: str) -> None:
    # what Settings > Languages writes (LocalePicker.updateLocales -> persist.sys.locale)
    if not re.fullmatch(r"[a-z]{2,3}(-[A-Za-z0-9]{2,8})*", value):
        raise ValueError("locale needs a BCP 47 tag, e.g. locale:ru-RU or locale:ko-KR")
    phone.props["persist.sys.locale"] = value


def _sim_country(phone: Phone, value: str) -> None:
    # the SIM's country as TelephonyManager.getSimCountryIso reads it (the
    # gsm.sim.operator.iso-country property GsmCdmaPhone/SIMRecords set, lower case, one per
    # slot joined by commas on a dual-SIM phone: sim-country:ru/kr), and the network's
    # (gsm.operator.iso-country) the same: a phone at home. The language is locale:'s.
    slots = value.lower().split("/")
    if not all(re.fullmatch(r"[a-z]{2}|", s) for s in slots) or not any(slots):
        raise ValueError("sim-country needs ISO 3166 codes, e.g. sim-country:ru or ru/kr")
    phone.props["gsm.sim.operator.iso-country"] = ",".join(slots)
    phone.props["gsm.operator.iso-country"] = ",".join(slots)


def _contact(phone: Phone, value: str) -> None:
    """``NAME=NUMBER[:TYPE][:new]``: NAME is everything before the last ``=``; TYPE a
    ``Phone.TYPE_*`` code or its name (``mobile``, ``work``...); ``new`` starts another
    contact of the same NAME (one the owner kept apart) instead of adding to the last one."""

    name, _, rest = value.rpartition("=")
    number, _, tail = rest.partition(":")
    words = [w for w in tail.split(":") if w]
    separate = "new" in words
    kinds = [w for w in words if w != "new"]
    if not name.strip() or not number.strip() or len(kinds) > 1:
        raise ValueError(
            "contact needs NAME=NUMBER[:TYPE][:new], e.g. contact:Анна Иванова=+79161234567:mobile"
        )
    kind = kinds[0] if kinds else "2"
    names = {t.name.lower(): int(t) for t in PhoneType}
    if not re.fullmatch(r"[0-9]+", kind) and kind.lower() not in names:
        raise ValueError("contact TYPE is a Phone type code or name: 1 home, 2 mobile, 3 work, ...")
    code = int(kind) if kind.isdigit() else names[kind.lower()]
    phone.service(ContactsProvider).add(name.strip(), number.strip(), code, separate=separate)


def _notification(phone: Phone, value: str) -> None:
    """``PKG=TITLE|TEXT``: PKG is everything before the first ``=``, TEXT after the first ``|``."""

    package, _, rest = value.partition("=")
    title, sep, text = rest.partition("|")
    if not re.fullmatch(r"[A-Za-z][\w]*(\.[A-Za-z][\w]*)+", package) or not sep:
        raise ValueError(
            "notification needs PKG=TITLE|TEXT, e.g. notification:org.telegram.messenger=Анна|Привет"
        )
    model = phone.service(NotificationService)
    ids = [n.id for n in model.posted if n.package == package]
    seeded = len(model.posted)
    when = int(time.time() * 1000) - 60_000 * (10 - min(seeded, 9))
    model.post(package, title, text, id=max(ids, default=0) + 1, post_time_ms=when)


def _app_disabled(phone: Phone, value: str) -> None:
    """``app-disabled:PKG``: what ``pm disable-user PKG`` leaves: listed by ``pm list
    packages -d``, its activities never resolve."""
    if value not in phone.packages.packages:
        raise ValueError(
            "app-disabled needs an installed package, e.g. app-disabled:com.example.notes"
        )
    phone.packages.disabled.add(value)


def _permission_dialog(phone: Phone, value: str) -> None:
    if not value:
        raise ValueError(
            "permission-dialog needs a package, e.g. permission-dialog:com.example.notes"
        )
    phone.faults.permission_dialog_packages.add(value)
    asks = phone.ui.permission_requests.get(value) or _asked_permission(phone, value)
    if asks is None:
        return
    phone.ui.permission_requests[value] = asks
    if value in phone.packages.packages:
        # the dialog asks because the person once revoked it; Allow grants it back, never a
        # SecurityException for a permission the app does not request (issue #13)
        phone.packages.revoke(value, asks)


def _asked_permission(phone: Phone, package: str) -> str | None:
    """The runtime permission opening ``package`` asks for: Camera when it requests it (the
    simulator's default dialog), else its first runtime permission (Messages: SMS)."""
    runtime = phone.packages.runtime_permissions(package)
    if not runtime:
        return None
    camera = "android.permission.CAMERA"
    return camera if camera in runtime else next(iter(runtime))


_OWN: dict[str, Callable[[Phone, str], None]] = {
    "locked": _locked,
    "screen-off": _screen_off,
    "no-bluetooth": _no_bluetooth,
    "ble-scanning": _ble_scanning,
    "bt-airplane": _bt_airplane,
    "dnd-noop": _dnd_noop,
    "unauthorized": _unauthorized,
    "slow": _slow,
    "drop-after": _drop_after,
    "drop-at": _drop_at,
    "permission-dialog": _permission_dialog,
    "ui-dump-not-idle": _ui_dump_not_idle,
    "ui-dump-killed": _ui_dump_killed,
    "u2-broken": _u2_broken,
    "u2-dies-after": _u2_dies_after,
    "u2-left-running": _u2_left_running,
    "debuggable": _debuggable,
    "ui-costs": _ui_costs,
    "second-display": _second_display,
    "chat-send": _chat_send,
    "work-profile": _work_profile,
    "locale": _locale,
    "sim-country": _sim_country,
    "contact": _contact,
    "notification": _notification,
    "app-disabled": _app_disabled,
}

# Every scenario name: the ones above and each variant's (``sim/variants``: samsung-messages,
# samsung-power, inject-denied...). Variant handlers take the ``PhoneState`` a ``Phone`` is.
SCENARIOS: dict[str, Callable[[Phone, str], None]] = {
    **_OWN,
    **{name: handler for v in variants() for name, handler in v.scenarios.items()},
}


def parse(spec: str) -> list[tuple[str, str]]:
    """``"locked,slow:300"`` into ``[("locked", ""), ("slow", "300")]``; unknown names raise."""
    items = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, _, value = part.partition(":")
        if name not in SCENARIOS:
            raise ValueError(
                f"unknown scenario {name!r}; choose from {', '.join(sorted(SCENARIOS))}"
            )
        items.append((name, value))
    return items


def apply(phone: Phone, spec: str) -> None:
    """Apply every scenario in ``spec`` to ``phone``; raise ``ValueError`` naming a bad one."""
    for name, value in parse(spec):
        try:
            SCENARIOS[name](phone, value)
        except ValueError as exc:
            raise ValueError(f"scenario {name}: {exc}") from exc
