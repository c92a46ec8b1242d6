"""The task methods: one module per family (``dnd``, ``sms``, ``ui_tap``...), each ending
with a ``DECLARED`` tuple of ``Method`` declarations (``device/actions/method.py``).

A module here is found, not listed (``device/actions/registry.py``): adding a method is one
file in this folder plus its tests. The framework that validates, runs, journals and
reconciles a method is ``phoned.device.actions``; a method module imports it, never the
other way round (``lint-imports``).
"""
