"""Registers the screen's tools: ``am``, ``monkey``, ``input``, ``wm``, ``uiautomator``,
``screencap``, ``app_process`` and ``dumpsys window|activity|power|display``.

``registry.SIM_SERVICES`` names only this module for the screen; importing it imports the modules that hold
the tools so their decorators run.
"""

from __future__ import annotations

from device.sim.ui import am, dumpsys_ui, input_tools, u2server

__all__ = ["am", "dumpsys_ui", "input_tools", "u2server"]
