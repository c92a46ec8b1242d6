"""Which processes on the phone hold UiAutomation for a uiautomator2 server (pure parsers).

A phone has one UiAutomation client at a time; ``uiautomator dump`` fails with
``UiAutomationService ... already registered!`` while a uiautomator2 server is still up
(openatx/uiautomator2#298, #1013). Such a server is one of:

* uiautomator2 3.x: ``CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main
  -p 9008``, started from ``adb shell`` so it runs as ``shell`` (uiautomator2 ``core.py``
  ``launch_uiautomator``); the shell user may ``kill`` it. uiautomator2 itself stops it by
  closing that shell stream (``stop_uiautomator``), which a later process cannot do, so
  phoned ends it by pid.
* uiautomator2 2.x: the instrumentation of the ``com.github.uiautomator`` app (the process
  line in uiautomator2 ``__init__.py`` ``_pidof_app``: ``u0_a1 1318 ... S
  com.github.uiautomator``), an app process the shell cannot signal; 2.x's
  ``reset_uiautomator`` stops it with ``am force-stop com.github.uiautomator``.

The input is ``ps -A -o PID,USER,ARGS`` of toybox (``toys/posix/ps.c``: a header line, then
one right-aligned pid, the user and the whole command line per process).
"""

from __future__ import annotations

from dataclasses import dataclass

U2_SERVER_CLASS = "com.wetest.uia2.Main"  # uiautomator2 3.x core.py
U2_APK_PACKAGE = "com.github.uiautomator"  # uiautomator2 2.x app (and its .test package)


@dataclass(frozen=True)
class Holder:
    """One uiautomator2 server process found in ``ps``."""

    pid: int
    user: str
    args: str

    @property
    def is_app(self) -> bool:
        """A 2.x server (an app's instrumentation): stopped by force-stopping the app."""
        return _is_u2_app(self.args.split())


def _is_u2_app(words: list[str]) -> bool:
    """The 2.x app's process: its package name, or one of its ``PACKAGE:name`` processes."""
    return bool(words) and words[0].split(":", 1)[0] == U2_APK_PACKAGE


def parse_ps(stdout: str) -> list[tuple[int, str, str]]:
    """(pid, user, args) of every line of ``ps -A -o PID,USER,ARGS``; other lines skipped."""
    rows = []
    for line in stdout.splitlines():
        parts = line.split(None, 2)
        if len(parts) >= 2 and parts[0].isdigit():
            rows.append((int(parts[0]), parts[1], parts[2] if len(parts) > 2 else ""))
    return rows


def uiautomator2_servers(stdout: str) -> list[Holder]:
    """The uiautomator2 servers among the processes ``stdout`` lists, oldest pid first."""
    found = []
    for pid, user, args in parse_ps(stdout):
        words = args.split()
        if U2_SERVER_CLASS in words or _is_u2_app(words):
            found.append(Holder(pid, user, args))
    return sorted(found, key=lambda h: h.pid)
