"""Package manager, runtime grants, roles and dumpsys package of the simulated phone."""

from __future__ import annotations

import pytest
from helpers import android_fixture as fixture
from helpers import call_tool as run

from phoned.sim.android.packages import SMS_PACKAGE, PackageError, cmd_package, cmd_role, pm
from phoned.sim.android.packages_dump import dumpsys_package, flags_to_string
from phoned.sim.phone import Phone

NOTES = "com.example.notes"
CAMERA = "android.permission.CAMERA"


def test_list_packages_third_party_and_filter() -> None:
    phone = Phone(sdk=34)
    assert run(phone, pm, ["pm", "list", "packages", "-3"]) == (0, f"package:{NOTES}\n", "")
    _, out, _ = run(phone, pm, ["pm", "list", "packages", "messaging"])
    assert out == f"package:{SMS_PACKAGE}\n"
    _, out, _ = run(phone, cmd_package, ["package", "list", "packages", "-f", "-3"])
    assert out.startswith("package:/data/app/~~") and out.endswith(f"/base.apk={NOTES}\n")


def test_list_packages_names_the_permission_controller_per_sdk() -> None:
    _, out28, _ = run(Phone(sdk=28), pm, ["pm", "list", "packages", "-s"])
    _, out33, _ = run(Phone(sdk=33), pm, ["pm", "list", "packages", "-s"])
    assert "package:com.google.android.packageinstaller\n" in out28
    assert "package:com.google.android.permissioncontroller\n" in out33
    assert NOTES not in out33


def test_path_of_unknown_package_is_silent_exit_1() -> None:
    phone = Phone(sdk=30)
    assert run(phone, pm, ["pm", "path", "com.nope"]) == (1, "", "")
    assert run(phone, pm, ["pm", "path", NOTES])[1].startswith("package:/data/app/~~")
    assert run(Phone(sdk=28), pm, ["pm", "path", NOTES])[1] == (
        f"package:/data/app/{NOTES}-1/base.apk\n"
    )


def test_grant_and_revoke_show_in_dumpsys_package() -> None:
    phone = Phone(sdk=33)
    assert run(phone, pm, ["pm", "grant", NOTES, CAMERA]) == (0, "", "")
    assert phone.packages.runtime_permissions(NOTES) == {
        CAMERA: True,
        "android.permission.POST_NOTIFICATIONS": False,
    }
    _, out, _ = run(phone, dumpsys_package, ["package", NOTES])
    assert fixture("dumpsys-33-package-notes-permissions.txt") in out
    run(phone, pm, ["pm", "revoke", NOTES, CAMERA])
    _, out, _ = run(phone, dumpsys_package, ["package", NOTES])
    assert f"        {CAMERA}: granted=false, flags=[ USER_SENSITIVE_WHEN_GRANTED|" in out


def test_grant_of_a_permission_not_requested_is_an_exception() -> None:
    rc, out, err = run(Phone(sdk=33), pm, ["pm", "grant", NOTES, "android.permission.READ_SMS"])
    assert (rc, out) == (255, "")
    assert err == fixture("pm-33-grant-not-requested.stderr.txt")


@pytest.mark.parametrize(
    ("sdk", "message"),
    [
        (28, "Permission android.permission.INTERNET is not a changeable permission type"),
        (
            30,
            f"Permission android.permission.INTERNET requested by {NOTES} is not a changeable "
            "permission type",
        ),
        (
            35,
            f"Permission android.permission.INTERNET requested by package {NOTES} is not a "
            "changeable permission type",
        ),
    ],
)
def test_grant_of_an_install_permission_per_sdk(sdk: int, message: str) -> None:
    rc, _, err = run(Phone(sdk=sdk), pm, ["pm", "grant", NOTES, "android.permission.INTERNET"])
    assert rc == 255
    assert err.splitlines()[1] == f"java.lang.SecurityException: {message}"


def test_unknown_package_and_permission_and_missing_args() -> None:
    phone = Phone(sdk=34)
    err = run(phone, pm, ["pm", "grant", "com.nope", CAMERA])[2]
    assert err.splitlines()[1] == "java.lang.IllegalArgumentException: Unknown package: com.nope"
    err = run(phone, pm, ["pm", "grant", NOTES, "android.permission.FLY"])[2]
    assert err.splitlines()[1] == (
        "java.lang.IllegalArgumentException: Unknown permission: android.permission.FLY"
    )
    assert run(phone, pm, ["pm", "grant"]) == (1, "", "Error: no package specified\n")
    assert run(phone, pm, ["pm", "grant", NOTES]) == (1, "", "Error: no permission specified\n")


def test_post_notifications_does_not_exist_before_33() -> None:
    phone = Phone(sdk=30)
    with pytest.raises(PackageError, match="Unknown permission"):
        phone.packages.grant(NOTES, "android.permission.POST_NOTIFICATIONS")
    assert phone.packages.runtime_permissions(NOTES) == {CAMERA: False}


def test_dnd_access_false_positive_in_dumpsys() -> None:
    phone = Phone(sdk=34)
    assert phone.settings.get("secure", "enabled_notification_policy_access_packages") == ""
    _, out, _ = run(phone, dumpsys_package, ["package", NOTES])
    assert "      android.permission.ACCESS_NOTIFICATION_POLICY: granted=true\n" in out
    assert phone.packages.is_granted(NOTES, "android.permission.ACCESS_NOTIFICATION_POLICY")


def test_sdk28_lists_only_runtime_permissions_with_a_state() -> None:
    phone = Phone(sdk=28)
    _, out, _ = run(phone, dumpsys_package, ["package", NOTES])
    assert "runtime permissions:" not in out
    phone.packages.grant(NOTES, CAMERA)
    _, out, _ = run(phone, dumpsys_package, ["package", NOTES])
    assert f"      runtime permissions:\n        {CAMERA}: granted=true\n" in out


def test_flags_to_string_matches_settings_layout() -> None:
    assert flags_to_string(0) == ""
    assert (
        flags_to_string(0x8000 | 0x100) == ", flags=[ USER_SENSITIVE_WHEN_GRANTED|GRANTED_BY_ROLE]"
    )


def test_sms_role_holders_and_setting_stay_in_sync() -> None:
    phone = Phone(sdk=34)
    assert run(phone, cmd_role, ["role", "get-role-holders", "android.app.role.SMS"]) == (
        0,
        f"{SMS_PACKAGE}\n",
        "",
    )
    rc, _, err = run(phone, cmd_role, ["role", "add-role-holder", "android.app.role.SMS", NOTES])
    assert rc == 255 and "java.lang.RuntimeException: Failed" in err
    assert phone.packages.default_sms_package() == SMS_PACKAGE
    run(phone, cmd_role, ["role", "remove-role-holder", "android.app.role.SMS", SMS_PACKAGE])
    assert run(phone, cmd_role, ["role", "get-role-holders", "android.app.role.SMS"])[1] == "\n"
    assert phone.settings.get("secure", "sms_default_application") is None
    run(
        phone,
        cmd_role,
        ["role", "add-role-holder", "--user", "0", "android.app.role.SMS", SMS_PACKAGE],
    )
    assert phone.settings.get("secure", "sms_default_application") == SMS_PACKAGE


def test_below_29_the_setting_is_the_source_of_truth() -> None:
    phone = Phone(sdk=28)
    assert phone.packages.default_sms_package() == SMS_PACKAGE
    phone.settings.put("secure", "sms_default_application", "com.google.android.dialer")
    assert phone.packages.default_sms_package() == "com.google.android.dialer"
    rc, _, err = run(phone, cmd_role, ["role", "get-role-holders", "android.app.role.SMS"])
    assert rc != 0 and "Can't find service" in err


def test_resolve_activity_brief() -> None:
    phone = Phone(sdk=34)
    rc, out, _ = run(
        phone,
        cmd_package,
        ["package", "resolve-activity", "--brief", "-c", "android.intent.category.LAUNCHER", NOTES],
    )
    assert rc == 0
    assert out.splitlines()[-1] == f"{NOTES}/.MainActivity"
    assert (
        run(phone, cmd_package, ["package", "resolve-activity", "--brief", "com.android.shell"])[1]
        == "No activity found\n"
    )
    assert (
        phone.packages.launch_activity("com.android.settings") == "com.android.settings/.Settings"
    )


def test_android_10_and_11_have_no_get_role_holders() -> None:
    # frameworks/base RoleManagerShellCommand (Android 10/11): add/remove/clear only;
    # ShellCommand.handleDefaultCommands prints the refusal on stdout, exit 255
    phone = Phone(sdk=30)
    rc, out, _ = run(phone, cmd_role, ["role", "get-role-holders", "android.app.role.SMS"])
    assert (rc, out) == (255, "Unknown command: get-role-holders\n")
    from phoned.device import parsers

    assert parsers.parse_role_holders(out) == []
