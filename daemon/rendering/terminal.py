"""Text for a terminal: stored fields are shown, never obeyed.

Task fields, evidence and daemon messages come from planners, phones and daemons; any of
them may hold terminal escapes (``\\x1b]0;title\\x07`` retitles the window, ``\\x1b[2J``
clears it, a carriage return overwrites what was printed) or bidi overrides that reorder
what is read. Every renderer that prints to a terminal passes its text through
``terminal_text`` (one line: every control character shown as ``\\n``, ``\\xNN`` or ``\\uNNNN``,
newlines included, so a field can never forge a line of its own) or ``terminal_lines``
(a field that may span lines: each line escaped, continuation lines indented under it).
"""

from __future__ import annotations

import re

# C0 controls, DEL, C1 controls (ESC, CSI, OSC, ...), and the Unicode format characters
# that reorder or split what a reader sees (bidi embeddings/overrides/isolates, the line and
# paragraph separators, the Arabic letter mark).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match[0]
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(value: object) -> str:
    """``value`` as one terminal line: every control or format character visibly escaped."""
    return _UNSAFE.sub(_escape, str(value))


def terminal_lines(value: object, indent: str = "  ") -> str:
    """``value`` that may span lines: each line escaped (``\\r`` too), later lines indented."""
    text = str(value).replace("\r\n", "\n")
    return ("\n" + indent).join(terminal_text(line) for line in text.split("\n"))
