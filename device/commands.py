"""Every shell command phoned runs on a phone, as a named argv constant.

Commands that differ by API level are functions of the SDK (``for_sdk``-style); action
modules build argv only from these, and text values are appended as single argv elements.
"""

from __future__ import annotations

# Identity and capability probes (device layer).
GETPROP_ALL = ("getprop",)
CMD_LIST_SERVICES = ("cmd", "-l")
NOTIFICATION_HELP = ("cmd", "notification", "help")
