"""``settings`` (``/system/bin/settings`` runs ``cmd settings "$@"``).

Parsing, messages and exit codes follow SettingsService.MyShellCommand (aosp-mirror/
platform_frameworks_base packages/SettingsProvider/src/com/android/providers/settings/
SettingsService.java): ``get`` prints the value or ``null``; ``put`` prints nothing; ``delete``
prints ``Deleted N rows``; ``list`` prints sorted ``key=value``; errors go to stderr and the
command returns -1, which ``cmd`` turns into exit status 255.

Values live in ``phone.settings``. System services that change a value asynchronously
(ZenModeHelper reverting ``zen_mode``, the Bluetooth manager persisting ``bluetooth_on``)
register ``settle()`` as a read hook of ``phone.settings``, so every read here is settled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from phoned.sim.shell.registry import ToolIO, tool

if TYPE_CHECKING:
    pass

FAIL = 255  # MyShellCommand returns -1
USERS = (0,)

HELP = """Settings provider (settings) commands:
  help
      Print this help text.
  get [--user <USER_ID> | current] NAMESPACE KEY
      Retrieve the current value of KEY.
  put [--user <USER_ID> | current] NAMESPACE KEY VALUE [TOKEN] [default]
      Change the contents of KEY to VALUE.
      TOKEN to associate with the setting.
      {default} to set as the default, case-insensitive only for global/secure namespace
  delete NAMESPACE KEY
      Delete the entry for KEY.
  reset [--user <USER_ID> | current] NAMESPACE {PACKAGE_NAME | RESET_MODE}
      Reset the global/secure table for a package with mode.
      RESET_MODE is one of {untrusted_defaults, untrusted_clear, trusted_defaults}, case-insensitive
  list NAMESPACE
      Print all defined keys.
      NAMESPACE is one of {system, secure, global}, case-insensitive
"""

VERBS = ("get", "put", "delete", "list", "reset")


class UsageError(Exception):
    """A message MyShellCommand prints to stderr before returning -1."""


@dataclass
class Request:
    """One parsed ``settings`` invocation."""

    verb: str = ""
    user: int | None = None
    table: str = ""
    key: str = ""
    value: str | None = None


def _table(arg: str) -> str:
    if arg.lower() not in ("system", "secure", "global"):
        raise UsageError(f"Invalid namespace '{arg}'")
    return arg.lower()


def _parse_user(args: list[str], req: Request) -> None:
    if req.user is not None:
        raise UsageError("Bad arguments")
    if not args:
        raise UsageError('Argument expected after "--user"')
    arg = args.pop(0)
    req.user = 0 if arg in ("current", "cur") else int(arg)


def _check_tail(args: list[str], req: Request) -> None:
    """Arguments after NAMESPACE for each verb, with the real error texts."""
    needs = {"get": 1, "delete": 1, "put": 2, "list": 0, "reset": 1}[req.verb]
    if len(args) < needs:
        raise UsageError("Bad arguments")
    if req.verb in ("get", "delete", "reset") and len(args) > needs + (req.verb == "reset"):
        raise UsageError("Too many arguments")
    if req.verb == "put" and len(args) > 4:
        raise UsageError("Too many arguments")
    if req.verb == "put" and len(args) == 4 and args[3].lower() != "default":
        raise UsageError("Argument expected to be 'default'")
    if needs:
        req.key = args[0]
    if req.verb == "put":
        req.value = args[1]


def parse(argv: list[str]) -> Request:
    """Parse ``settings`` arguments the way MyShellCommand.onCommand does."""
    args = list(argv[1:])
    req = Request()
    while args:
        arg = args.pop(0)
        if arg == "--user":
            _parse_user(args, req)
        elif not req.verb:
            if arg.lower() not in VERBS:
                raise UsageError(f"Invalid command: {arg}")
            req.verb = arg.lower()
        else:
            req.table = _table(arg)
            if req.verb != "list":
                _check_tail(args, req)
                return req
            if args:
                raise UsageError("Bad arguments")
            return req
    raise UsageError("Bad arguments")


def _validate_user(req: Request) -> None:
    if req.user is not None and req.verb in ("delete", "list"):
        raise UsageError("--user not supported for delete and list.")
    if req.user is not None and req.user not in USERS:
        raise UsageError(f"Invalid user: {req.user}")


def _run(io: ToolIO, req: Request) -> None:
    settings = io.phone.settings
    if req.verb == "get":
        value = settings.get(req.table, req.key)
        io.out(f"{'null' if value is None else value}\n")
    elif req.verb == "put":
        settings.put(req.table, req.key, req.value or "")
    elif req.verb == "delete":
        io.out(f"Deleted {1 if settings.delete(req.table, req.key) else 0} rows\n")
    elif req.verb == "list":
        lines = sorted(f"{k}={v}" for k, v in settings.items(req.table).items())
        io.out("".join(line + "\n" for line in lines))
    elif req.table == "system":
        io.err("Invalid table; no reset performed\n")


@tool("settings")
def settings_tool(io: ToolIO, argv: list[str]) -> int:
    """``settings [--user N] get|put|delete|list|reset NAMESPACE [KEY [VALUE [TAG] [default]]]``."""
    if len(argv) < 2 or argv[1] in ("help", "-h"):
        io.out(HELP)
        return FAIL
    try:
        req = parse(argv)
        _validate_user(req)
    except UsageError as exc:
        io.err(f"{exc}\n")
        return FAIL
    except ValueError as exc:  # Integer.parseInt on --user
        io.err(f"java.lang.NumberFormatException: {exc}\n")
        return FAIL
    with io.phone.lock:
        _run(io, req)
    return 0
