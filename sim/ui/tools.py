"""Registers the screen's tools: ``am``, ``monkey``, ``input``, ``wm``, ``uiautomator``,
``screencap``, ``app_process`` and ``dumpsys window|activity|power|display``.

Importing it imports the modules that hold the tools so their decorators run
(``registry.load_all`` imports every module of ``phoned.sim.ui`` anyway).
"""

from __future__ import annotations

from phoned.sim.ui import am, dumpsys_ui, input_tools, u2server

__all__ = ["am", "dumpsys_ui", "input_tools", "u2server"]
