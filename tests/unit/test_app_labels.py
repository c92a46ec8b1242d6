"""``phoned.device.app_labels``: the accessibility window list in the shapes AOSP prints it
(``AccessibilityWindowInfo.toString`` @5f4a4795, ``A11yWindow[`` lines from
AccessibilityWindowManager @105f79ba; the older ``Window[`` lines joined by commas), and the
label of the app in front read from it. The lines are built from those sources' format
strings, not captured; the ``WindowInfo[...]`` lines the newest dump adds are elided (not
parsed)."""

from __future__ import annotations

from phoned.device.app_labels import A11yWindow, front_label, no_label_reason, parse_a11y_windows

NEW = """ACCESSIBILITY MANAGER (dumpsys accessibility)

currentUserId=0
Display[0] :
A11yWindow[AccessibilityWindowInfo[title=null, displayId=0, id=12, taskId=-1, type=TYPE_SYSTEM, layer=3, region=SkRegion((0,0,1080,136)), bounds=Rect(0, 0 - 1080, 136), focused=false, active=false, pictureInPicture=false, transitionTime=0, hasParent=false, isAnchored=false, hasChildren=false]]
WindowInfo[...]
A11yWindow[AccessibilityWindowInfo[title=Настройки, displayId=0, id=40, taskId=7, type=TYPE_APPLICATION, layer=2, region=SkRegion((0,0,1080,2400)), bounds=Rect(0, 0 - 1080, 2400), focused=true, active=true, pictureInPicture=false, transitionTime=1700, hasParent=false, isAnchored=false, hasChildren=false]]
WindowInfo[...]
"""

OLD = """Window[AccessibilityWindowInfo[title=Mail, Inbox, id=7, type=TYPE_APPLICATION, layer=21010, bounds=Rect(0, 0 - 1080, 1920), focused=true, active=true, pictureInPicture=false, hasParent=false, hasChildren=false]],
Window[AccessibilityWindowInfo[title=null, id=3, type=TYPE_SYSTEM, layer=161000, bounds=Rect(0, 0 - 1080, 63), focused=false, active=false, pictureInPicture=false, hasParent=false, hasChildren=false]]"""


def test_the_newest_shape_gives_each_window_and_the_front_label() -> None:
    windows = parse_a11y_windows(NEW)
    assert windows == [
        A11yWindow(None, "TYPE_SYSTEM", active=False, focused=False),
        A11yWindow("Настройки", "TYPE_APPLICATION", active=True, focused=True),
    ]
    assert front_label(windows) == "Настройки"


def test_the_older_shape_and_a_title_with_a_comma() -> None:
    windows = parse_a11y_windows(OLD)
    assert [w.title for w in windows] == ["Mail, Inbox", None]
    assert front_label(windows) == "Mail, Inbox"


def test_no_window_list_no_app_window_and_no_service_say_why() -> None:
    bare = "ACCESSIBILITY MANAGER (dumpsys accessibility)\n\ncurrentUserId=0\n"
    assert parse_a11y_windows(bare) == [] and front_label([]) is None
    assert "no accessibility client tracks" in no_label_reason(bare)
    system_only = NEW.replace("type=TYPE_APPLICATION", "type=TYPE_SYSTEM")
    assert front_label(parse_a11y_windows(system_only)) is None
    assert "no active application window" in no_label_reason(system_only)
    inactive = NEW.replace("focused=true, active=true", "focused=false, active=false")
    assert front_label(parse_a11y_windows(inactive)) is None
    assert "not registered" in no_label_reason("Can't find service: accessibility\n")
