"""Scenario fixtures: device actions against simulated phones, or a real phone/emulator.

Uses ``adb_server`` and ``sim_factory`` from ``tests/conftest.py``.

A test that takes ``dut`` runs once per simulated SDK (28, 30, 33, 34, 35) and once as a
``device`` variant (marked ``device``) against the phone named by ``ANDROID_SERIAL``; the
device variant skips, with its reason, when ``ANDROID_SERIAL`` is not set. Markers:

* ``sdks(28, 30)``: only these simulated SDK levels (the device variant still runs and the
  test skips itself when the real SDK does not fit);
* ``sim_only``: needs fault injection or the simulator's command log: no device variant;
* ``ui_costs``: keep the simulated UI cost model (``sim/ui/automation.py``); without
  it the fixture sets every UI delay to zero so the suite stays fast;
* ``phone("locale:ru-RU,samsung-messages")``: the simulated phone is set up so (``phoned sim
  --scenario`` names) before phoned first reads it, as an owner's phone is; the device
  variant runs as the real phone is set up (a test checks what it needs and skips).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from phoned.device.actions import Outcome, Status, execute
from phoned.device.actions.base import ActionContext
from phoned.device.adb import AdbServer as DeviceAdbServer
from phoned.device.connection import Device
from phoned.device.evidence import Recorder
from phoned.sim.phone import Phone
from phoned.sim.server import Simulator
from phoned.sim.ui.automation import UiCosts

SIM_SDKS = (28, 30, 33, 34, 35)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "dut" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("sdks")
    sdks = tuple(marker.args) if marker else SIM_SDKS
    params = [pytest.param(sdk, id=f"sim{sdk}") for sdk in sdks]
    if metafunc.definition.get_closest_marker("sim_only") is None:
        params.append(pytest.param("device", id="device", marks=pytest.mark.device))
    metafunc.parametrize("dut", params, indirect=True)


@dataclass
class Dut:
    """The device under test: a ``Device`` plus, for simulated phones, the ``Simulator``."""

    device: Device
    sim: Simulator | None
    artifacts: Path

    @property
    def sdk(self) -> int:
        return self.device.sdk

    @property
    def phone(self) -> Phone:
        if self.sim is None:
            pytest.skip("needs the simulated phone")
        return self.sim.phone

    def ctx(self, method: str, **kwargs: Any) -> ActionContext:
        """A fresh context with a short settle bound and fast polling."""
        kwargs.setdefault("settle_timeout", 3.0)
        kwargs.setdefault("poll_interval", 0.05)
        kwargs.setdefault("artifacts_dir", self.artifacts)
        return ActionContext(recorder=Recorder(self.device, method), **kwargs)

    def run(self, method: str, params: dict[str, Any], **kwargs: Any) -> Outcome:
        return execute(method, params, self.ctx(method, **kwargs))

    def execs(self) -> list[tuple[str, ...]]:
        """argv of every simple command the simulated phone ran (simulator only)."""
        return self.phone.log.argvs()

    def taps(self) -> list[tuple[str, ...]]:
        """Taps the screen received, whichever path delivered them (uiautomator2 click or
        ``input tap``): the simulated screen logs every one as a ``click``."""
        return [e.argv for e in self.phone.log.entries("click") if e.argv[:1] == ("tap",)]

    def send_to(self, simulated: str) -> str:
        """Whom a real message goes to: ``simulated`` on the simulator; on a phone the
        number in ``PHONED_DEVICE_SEND_TO`` (one you own), the test skipped without it."""
        if self.sim is not None:
            return simulated
        to = os.environ.get("PHONED_DEVICE_SEND_TO")
        if not to:
            pytest.skip("sends a real message: set PHONED_DEVICE_SEND_TO to a number you own")
        return to

    def approved_send(self, params: dict[str, Any], **kwargs: Any) -> Outcome:
        """``sms.send`` of ``params``: asked (it needs approval), then run again with the
        digest of the preview it showed."""
        first = self.run("sms.send", params)
        assert first.status is Status.NEEDS_APPROVAL, first.message
        digest = first.detail["preview_digest"]
        return self.run("sms.send", params, approval_digest=digest, **kwargs)


@pytest.fixture
def dut(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Dut]:
    if request.param == "device":
        serial = os.environ.get("ANDROID_SERIAL")
        if not serial:
            pytest.skip("device variant: set ANDROID_SERIAL (and run with -m device)")
        yield Dut(Device(serial, DeviceAdbServer()), None, tmp_path)
        return
    server = request.getfixturevalue("adb_server")
    sim = request.getfixturevalue("sim_factory")(sdk=request.param)
    setup = request.node.get_closest_marker("phone")
    if setup is not None:
        from phoned.sim import scenarios

        scenarios.apply(sim.phone, setup.args[0])
    sim.phone.bluetooth.TURN_ON_S = 0.3  # shorter transitions keep the suite fast
    sim.phone.bluetooth.TURN_OFF_S = 0.2
    if request.node.get_closest_marker("ui_costs") is None:  # no UI delays unless measured
        sim.phone.ui.automation.costs = UiCosts.none()
    device = Device(sim.serial, DeviceAdbServer(port=server.port))
    # probed once per connection, as the daemon does; not part of any action's commands
    assert device.capabilities is not None and device.identity.sdk == request.param
    sim.phone.log.clear()
    yield Dut(device, sim, tmp_path)
    device.close()


@pytest.fixture
def notes(dut: Dut) -> Dut:
    """``dut`` with the notes app (``com.example.notes``) opened in front, its log cleared."""
    out = dut.run("app.open", {"package": "com.example.notes"})
    assert out.status is Status.MET, out.message
    dut.phone.log.clear()
    return dut
