"""toybox sed (basics), base64, sha*sum and uname on the simulated phone.

Sources: landley/toybox ``toys/posix/sed.c`` (``-n``, ``-e``, ``-i``, ``s/RE/REPL/[gp]``,
``p``, ``d``, a line number or ``$`` address; an unparsable script is ``error_exit("bad
pattern")``-style ``sed: bad ...``), ``toys/other/base64.c`` (``-d``, ``-w COLUMNS``, 76
columns by default), ``toys/lsb/md5sum.c`` (the sha family prints as md5sum does),
``toys/posix/uname.c`` (``-a`` prints ``-s -n -r -v -m -o``; ``-o`` is ``Toybox``,
hard-coded in uname.c; the kernel release and version of a Pixel of each release
come from the profile).
"""

from __future__ import annotations

import base64 as b64
import binascii
import hashlib
import re

from phoned.sim.shell.registry import ToolIO, tool
from phoned.sim.shell.tools.file_tools import _read_inputs, split_flags

# ``uname -r`` of the simulated Pixel per SDK: the kernel line each one ships (Pixel 3: 4.9,
# Pixel 4a: 4.14, Pixel 6 and 7: 5.10 GKI, Pixel 8: 5.15 GKI, from their kernel/manifest
# branches); the patch level and build suffix are placeholders nothing reads.
KERNELS = {
    28: "4.9.223-g3a0c6e7", 30: "4.14.262-g2a1b0f3", 33: "5.10.157-android12-9-g1e2d3c4",
    34: "5.10.198-android13-4-g5f6a7b8", 35: "5.15.137-android14-11-g9c0d1e2",
}  # fmt: skip
KERNEL_VERSION = "#1 SMP PREEMPT Mon Jan 1 00:00:00 UTC 2024"


@tool("uname")
def uname(io: ToolIO, argv: list[str]) -> int:
    flags, _values, _operands = split_flags(argv)
    release = KERNELS.get(io.phone.sdk, KERNELS[34])
    machine = "aarch64"
    host = "localhost"
    parts = {"s": "Linux", "n": host, "r": release, "v": KERNEL_VERSION, "m": machine,
             "o": "Toybox"}  # fmt: skip
    order = "snrvmo" if "a" in flags else "".join(f for f in "snrvmo" if f in flags) or "s"
    io.out(" ".join(parts[f] for f in order) + "\n")
    return 0


@tool("base64")
def base64(io: ToolIO, argv: list[str]) -> int:
    flags, values, operands = split_flags(argv, with_value="w")
    inputs, status = _read_inputs(io, "base64", operands[:1])
    data = b"".join(d for _label, d in inputs)
    if "d" in flags:
        try:
            io.stdout.write(b64.b64decode(b"".join(data.split()), validate=True))
        except binascii.Error:
            io.err("base64: bad input\n")
            return 1
        return status
    encoded = b64.b64encode(data).decode("ascii")
    width = int(values.get("w", "76"))
    if width:
        encoded = "\n".join(encoded[i : i + width] for i in range(0, len(encoded), width))
    io.out(encoded + "\n" if encoded else "")
    return status


def _hash_tool(name: str, algorithm: str) -> None:
    @tool(name)
    def run(io: ToolIO, argv: list[str]) -> int:
        inputs, status = _read_inputs(io, name, [a for a in argv[1:] if not a.startswith("-")])
        for label, data in inputs:
            io.out(f"{hashlib.new(algorithm, data).hexdigest()}  {label}\n")
        return status


for _name, _algorithm in (("sha1sum", "sha1"), ("sha256sum", "sha256"), ("sha512sum", "sha512")):
    _hash_tool(_name, _algorithm)


# ------------------------------------------------------------------ sed


SUBSTITUTE = re.compile(
    r"^(?P<addr>\d+|\$)?s(?P<d>.)(?P<re>.*?)(?P=d)(?P<to>.*?)(?P=d)(?P<fl>[gpI]*)$"
)
SIMPLE = re.compile(r"^(?P<addr>\d+|\$|/[^/]*/)?(?P<cmd>[pd])$")


def _bre(pattern: str) -> str:
    """A sed basic regex in Python terms: ``\\( \\) \\{ \\} \\+ \\?`` are the operators."""
    out = pattern.replace(r"\(", "\0(").replace(r"\)", "\0)")
    out = out.replace("(", r"\(").replace(")", r"\)").replace("\0\\(", "(").replace("\0\\)", ")")
    return out.replace(r"\+", "+").replace(r"\?", "?")


def _repl(to: str) -> str:
    return re.sub(r"\\(\d)", r"\\g<\1>", to).replace("&", r"\g<0>")


def _addressed(addr: str | None, number: int, last: bool, line: str) -> bool:
    if addr is None:
        return True
    if addr == "$":
        return last
    if addr.startswith("/"):
        return re.search(_bre(addr[1:-1]), line) is not None
    return int(addr) == number


def _run_script(script: str, lines: list[str], quiet: bool) -> tuple[list[str], str | None]:
    sub = SUBSTITUTE.match(script)
    simple = SIMPLE.match(script)
    if sub is None and simple is None:
        return [], f"bad script '{script}'"
    out: list[str] = []
    for number, line in enumerate(lines, 1):
        last = number == len(lines)
        body = line.rstrip("\n")
        if sub is not None and _addressed(sub["addr"], number, last, body):
            flags = re.IGNORECASE if "I" in sub["fl"] else 0
            count = 0 if "g" in sub["fl"] else 1
            body, made = re.subn(_bre(sub["re"]), _repl(sub["to"]), body, count=count, flags=flags)
            if made and "p" in sub["fl"]:
                out.append(body + "\n")
        elif simple is not None and _addressed(simple["addr"], number, last, body):
            if simple["cmd"] == "d":
                continue
            out.append(body + "\n")
        if not quiet:
            out.append(body + ("\n" if line.endswith("\n") else ""))
    return out, None


@tool("sed")
def sed(io: ToolIO, argv: list[str]) -> int:
    """``sed [-n] [-i] [-e] SCRIPT [FILE...]``: one ``s///``, ``p`` or ``d`` command."""
    flags, values, operands = split_flags(argv, with_value="e")
    script = values.get("e")
    if script is None:
        if not operands:
            io.err('sed: Need 1 argument (see "sed --help")\n')
            return 1
        script, operands = operands[0], operands[1:]
    inputs, status = _read_inputs(io, "sed", operands)
    for label, data in inputs:
        lines = data.decode("utf-8", "replace").splitlines(keepends=True)
        out, error = _run_script(script, lines, "n" in flags)
        if error is not None:
            io.err(f"sed: {error}\n")
            return 1
        text = "".join(out)
        if "i" in flags and label != "-":
            with io.phone.lock:
                io.phone.fs.write(io.phone.fs.normalize(label, io.cwd), text.encode("utf-8"))
        else:
            io.out(text)
    return status
