"""``ui_hierarchy.dump_failure``: what ``uiautomator dump`` printed decides, never the file.

The texts are DumpCommand.java's own (AOSP frameworks/testing; the success line keeps its
typo) and the shapes seen on phones: errors on stderr with exit 0, ``Killed`` with 137, the
"already registered" exception when another UiAutomation client runs.
"""

from __future__ import annotations

import pytest

from phoned.device.ui_hierarchy import dump_failure

OK = "UI hierchary dumped to: /sdcard/window_dump.xml\n"
REGISTERED = (
    "java.lang.IllegalStateException: UiAutomationService android.accessibilityservice."
    "IAccessibilityServiceClient$Stub$Proxy@5deffd5already registered!\n"
)


def test_the_success_line_with_exit_0_is_success() -> None:
    assert dump_failure(OK, "", 0) is None


@pytest.mark.parametrize(
    ("stdout", "stderr", "code", "reason"),
    [
        ("", "ERROR: could not get idle state.\n", 0, "could not get idle state"),
        ("", "ERROR: null root node returned by UiTestAutomationBridge.\n", 0, "null root node"),
        ("", "Killed\n", 137, "killed"),
        ("", "", 137, "killed"),
        ("", REGISTERED, 1, "another UiAutomation client is registered"),
        ("", "", 0, "no 'UI hierchary dumped to:' line"),
        ("UI hierarchy dumped to: /sdcard/window_dump.xml\n", "", 0,
         "no 'UI hierchary dumped to:' line"),  # the typo is the real line; anything else is not
        (OK, "", 1, "exit status 1"),
        (OK, "ERROR: could not get idle state.\n", 0, "could not get idle state"),
    ],
)  # fmt: skip
def test_every_known_failure_is_named(stdout: str, stderr: str, code: int, reason: str) -> None:
    assert dump_failure(stdout, stderr, code) == reason
