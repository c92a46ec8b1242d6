"""Regenerate ``sim/shell/system_bin.json`` from AOSP's list of the shell's commands.

AOSP ``system/core/shell_and_utilities/README.md`` lists, per release, every command
``/system/bin`` links to and where it comes from (toybox, toolbox, BSD, bzip2, awk, bc).
This script reads that file (a checkout's copy, or ``git show HEAD:...`` of a mirror) and
writes the releases from Android 9 (API 28) on as JSON: ``{sdk: {provider: [names]}}``,
with the commit it was read from. Usage::

    git -C platform_system_core show HEAD:shell_and_utilities/README.md > README.md
    python scripts/shell_utilities_from_aosp.py README.md COMMIT > sim/shell/system_bin.json
"""

from __future__ import annotations

import json
import re
import sys

HEADING = re.compile(r"^## Android [\d.]+ \((?:API level )?(\d+),")
PROVIDER = re.compile(r"^([A-Za-z0-9/-]+)(?: \(.*\))?:\s*(.*)$")
NOT_A_PROVIDER = ("Note",)  # the prose paragraphs under a release
FIRST_SDK = 28


def _names(text: str) -> list[str]:
    """Command names of one provider's paragraph (bold marks and escapes removed)."""
    cleaned = text.replace("**", "").replace("\\_", "_")
    return sorted(word for word in cleaned.split() if word)


def releases(readme: str) -> dict[int, dict[str, list[str]]]:
    """``{sdk: {provider: names}}`` for every section from ``FIRST_SDK`` on."""
    found: dict[int, dict[str, list[str]]] = {}
    sdk: int | None = None
    provider = ""
    for line in readme.splitlines():
        heading = HEADING.match(line)
        if heading or line.startswith("## "):
            sdk = int(heading.group(1)) if heading else None
            provider = ""
            if sdk is not None and sdk >= FIRST_SDK:
                found[sdk] = {}
            continue
        if sdk is None or sdk < FIRST_SDK:
            continue
        if not line.strip():
            provider = ""
            continue
        match = PROVIDER.match(line)
        if not provider and match and match.group(1) in NOT_A_PROVIDER:
            provider = "-"  # skip the paragraph
        elif not provider and match:
            provider = match.group(1)
            found[sdk][provider] = _names(match.group(2))
        elif provider and provider != "-":
            found[sdk][provider] = sorted(found[sdk][provider] + _names(line))
    return found


def main() -> None:
    readme_path, commit = sys.argv[1], sys.argv[2]
    with open(readme_path, encoding="utf-8") as handle:
        table = releases(handle.read())
    document = {
        "source": "AOSP system/core shell_and_utilities/README.md",
        "commit": commit,
        "releases": {str(sdk): table[sdk] for sdk in sorted(table)},
    }
    json.dump(document, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
