"""Finding the uiautomator2 servers that hold UiAutomation in toybox ``ps`` output."""

from __future__ import annotations

from phoned.device.uiautomation_holders import parse_ps, uiautomator2_servers

# ``ps -A -o PID,USER,ARGS`` as toybox prints it (PID right-aligned in 6 columns, USER 12
# left-aligned, ARGS the whole command line); the lines are those of a phone with a 3.x
# server launched by uiautomator2 core.py and a 2.x server app (the process line in
# uiautomator2 __init__.py _pidof_app), the rest as a Pixel lists them.
PS = """\
   PID USER         ARGS
     1 root         /system/bin/init second_stage
  1142 shell        /apex/com.android.adbd/bin/adbd --root_seclabel=u:r:su:s0
  1540 system       system_server
 20417 shell        app_process / com.wetest.uia2.Main -p 9008
  1318 u0_a1        com.github.uiautomator
  2211 u0_a187      com.google.android.apps.messaging
  2399 u0_a99       com.github.uiautomatorx.other
"""


def test_parse_ps_rows() -> None:
    rows = parse_ps(PS)
    assert rows[0] == (1, "root", "/system/bin/init second_stage")
    assert (20417, "shell", "app_process / com.wetest.uia2.Main -p 9008") in rows
    assert len(rows) == 7  # the header is skipped


def test_both_generations_of_server_are_found_and_nothing_else() -> None:
    servers = uiautomator2_servers(PS)
    assert [(s.pid, s.is_app) for s in servers] == [(1318, True), (20417, False)]


def test_nothing_to_free() -> None:
    assert uiautomator2_servers("   PID USER         ARGS\n     1 root         init\n") == []
    assert uiautomator2_servers("") == []
