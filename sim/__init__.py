"""A simulated Android phone that speaks the device side of the ADB protocol (``phoned sim``).

A product of its own and the test bench of everything else, kept apart from the code that
reads a phone: it imports nothing of ``daemon`` or ``device`` (``lint-imports``); facts of
the platform both sides need are data in ``android_data``. Folders, bottom up
(docs/simulator.md):

- ``adb/``: ADB packets over TCP (``wire``, ``transport``), its services (shell, exec,
  sync, tcp:), and ``server.Simulator`` at the root, which listens for the adb server.
- ``shell/``: the POSIX-style interpreter, its builtins, the tool ``registry`` (the tables
  of binaries and of ``cmd``/``dumpsys``/``svc`` services) and ``shell/tools``, the
  toybox/toolbox commands.
- ``android/``: Android's system services and providers (settings, notification,
  bluetooth, audio, packages, sms, contacts, wifi, battery) and the framework commands
  backed by them (``settings``, ``content``, ``media``).
- ``ui/``: the screen (activities, window hierarchy, ``am``/``input``/``uiautomator``,
  ``screencap``, the uiautomator2 server) and the apps every phone has.
- ``variants/``: one record per manufacturer or app variant (``base.Variant``): what a
  Samsung, a Xiaomi, an SMS app changes, each in one file.
- ``phone_state``/``phone``: the shared state, and ``Phone`` with every model wired in;
  ``profiles``: per-SDK properties; ``scenarios``: ``--scenario`` names.
"""
