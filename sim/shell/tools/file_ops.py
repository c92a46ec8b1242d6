"""toybox mv, cp, rmdir, stat, find, dd and df on the simulated phone's files.

Texts follow landley/toybox: ``toys/posix/cp.c`` (cp and mv share ``cp_main``: a source
that cannot be read is ``perror_msg("bad '%s'")``, e.g. ``mv: bad '/x': No such file or
directory``; several sources need a directory, ``error_exit("'%s' not directory")``; fewer
than two operands is the ``<2`` of its option string, ``help_exit("Need 2 arguments")``),
``toys/posix/rmdir.c``, ``toys/other/stat.c`` (the default layout and ``-c`` escapes,
``%F`` names such as ``regular empty file``), ``toys/posix/find.c`` (``-name``, ``-type``,
``-maxdepth``), ``toys/pending/dd.c`` (``if= of= bs= count=`` and its ``N+0 records``
summary on stderr) and ``toys/posix/df.c`` (``Filesystem 1K-blocks Used Available Use%
Mounted on``). Every error exits 1 (``toys.exitval``).
"""

from __future__ import annotations

import fnmatch
import time

from phoned.sim.phone_state import FileSystem
from phoned.sim.shell.registry import ToolIO, tool
from phoned.sim.shell.tools.file_tools import ENOENT, each_operand, split_flags

NEED_TWO = "Need 2 arguments"


def _usage(io: ToolIO, name: str, message: str) -> int:
    io.err(f'{name}: {message} (see "{name} --help")\n')
    return 1


def _copy_tree(fs: FileSystem, source: str, target: str) -> None:
    """Copy a directory with everything below it to ``target``."""
    fs.mkdir(target, parents=True)
    prefix = source.rstrip("/") + "/"
    for directory in sorted(d for d in fs.dirs if d.startswith(prefix)):
        fs.dirs.add(target + directory[len(source) :])
    for path, entry in list(fs.files.items()):
        if path.startswith(prefix):
            fs.write(target + path[len(source) :], entry.data, mode=entry.mode)


def _transfer(io: ToolIO, name: str, argv: list[str], move: bool) -> int:
    """``cp``/``mv SOURCE... DEST``: into DEST when it is a directory, else onto it."""
    flags, _values, operands = split_flags(argv)
    if len(operands) < 2:
        return _usage(io, name, NEED_TWO)
    *sources, dest = operands
    status = 0
    with io.phone.lock:
        fs = io.phone.fs
        dest_path = fs.normalize(dest, io.cwd)
        into = fs.is_dir(dest_path)
        if len(sources) > 1 and not into:
            io.err(f"{name}: '{dest}' not directory\n")
            return 1
        for source in sources:
            path = fs.normalize(source, io.cwd)
            target = fs.normalize(path.rsplit("/", 1)[-1], dest_path) if into else dest_path
            if not fs.exists(path):
                io.err(f"{name}: bad '{source}': {ENOENT}\n")
                status = 1
            elif fs.is_dir(path) and not move and not flags & {"r", "R", "a"}:
                io.err(f"{name}: Skipped dir '{source}'\n")
                status = 1
            else:
                status |= _place(io, name, fs, path, target, move)
    return status


def _place(io: ToolIO, name: str, fs: FileSystem, path: str, target: str, move: bool) -> int:
    parent = target.rsplit("/", 1)[0] or "/"
    if not fs.is_dir(parent):
        io.err(f"{name}: '{target}': {ENOENT}\n")
        return 1
    if fs.is_dir(path):
        _copy_tree(fs, path, target)
        if move:
            fs.remove_tree(path)
        return 0
    entry = fs.files[path]
    fs.write(target, entry.data, mode=entry.mode)
    if move and target != path:
        fs.remove(path)
    return 0


@tool("mv")
def mv(io: ToolIO, argv: list[str]) -> int:
    return _transfer(io, "mv", argv, move=True)


@tool("cp")
def cp(io: ToolIO, argv: list[str]) -> int:
    return _transfer(io, "cp", argv, move=False)


def _remove_empty_dir(fs: FileSystem, arg: str, path: str) -> str | None:
    if not fs.is_dir(path):
        return f"'{arg}': {ENOENT if not fs.exists(path) else 'Not a directory'}"
    if fs.listdir(path):
        return f"'{arg}': Directory not empty"
    fs.remove_tree(path)
    return None


@tool("rmdir")
def rmdir(io: ToolIO, argv: list[str]) -> int:
    """``rmdir DIR...``: only empty directories (``rmdir: '/x': Directory not empty``)."""
    _flags, _values, operands = split_flags(argv)
    return each_operand(io, "rmdir", operands, _remove_empty_dir)


# ------------------------------------------------------------------ stat


def _stat_fields(io: ToolIO, arg: str, path: str) -> dict[str, str]:
    fs = io.phone.fs
    is_dir = fs.is_dir(path)
    entry = fs.files.get(path)
    size = 3452 if is_dir else len(entry.data) if entry else 0
    mode = 0o40771 if is_dir else (entry.mode if entry else 0o100644)
    mtime = entry.mtime if entry else 0
    kind = "directory" if is_dir else "regular file" if size else "regular empty file"
    iso = time.strftime("%Y-%m-%d %H:%M:%S.000000000 +0000", time.gmtime(mtime))
    user = "shell" if path.startswith("/data/local/tmp") else "root"
    uid = "2000" if user == "shell" else "0"
    perms = "".join(c if mode & (1 << (8 - i)) else "-" for i, c in enumerate("rwxrwxrwx"))
    return {
        "n": arg, "N": arg, "s": str(size), "a": f"{mode & 0o7777:o}", "F": kind,
        "A": ("d" if is_dir else "-") + perms, "f": f"{mode:x}", "Y": str(mtime),
        "X": str(mtime), "Z": str(mtime), "y": iso, "x": iso, "z": iso, "u": uid, "g": uid,
        "U": user, "G": user, "h": "2" if is_dir else "1", "i": str(abs(hash(path)) % 900000),
        "b": str((size + 511) // 512), "B": "512", "o": "4096",
    }  # fmt: skip


STAT_DEFAULT = (
    "  File: %N\n  Size: %s\t Blocks: %b\t IO Blocks: %B\t %F\n"
    "Device: fd05h/64773d\t Inode: %i\t Links: %h\t Device type: 0,0\n"
    "Access: (0%a/%A)\tUid: (%u/   %U)\tGid: (%g/   %G)\n"
    "Access: %x\nModify: %y\nChange: %z\n"
)


def _expand_stat(fmt: str, fields: dict[str, str]) -> str:
    out = []
    chars = iter(fmt)
    for char in chars:
        if char != "%":
            out.append(char)
            continue
        key = next(chars, "")
        out.append("%" if key == "%" else fields.get(key, "?"))
    return "".join(out)


@tool("stat")
def stat(io: ToolIO, argv: list[str]) -> int:
    """``stat [-c FORMAT] FILE...``; a missing file: ``stat: '/x': No such file...``."""
    _flags, values, operands = split_flags(argv, with_value="c")
    if not operands:
        return _usage(io, "stat", "Need 1 argument")
    fmt = values["c"] + "\n" if "c" in values else STAT_DEFAULT

    def show(fs: FileSystem, arg: str, path: str) -> str | None:
        if not fs.exists(path):
            return f"'{arg}': {ENOENT}"
        io.out(_expand_stat(fmt, _stat_fields(io, arg, path)))
        return None

    return each_operand(io, "stat", operands, show)


# ------------------------------------------------------------------ find


def _find_options(args: list[str]) -> tuple[list[str], dict[str, str]]:
    """Start paths and the supported tests (``-name``, ``-type``, ``-maxdepth``)."""
    starts: list[str] = []
    tests: dict[str, str] = {}
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-name", "-iname", "-type", "-maxdepth", "-mindepth") and index + 1 < len(args):
            tests[arg] = args[index + 1]
            index += 2
            continue
        if arg == "-print":
            index += 1
            continue
        if arg.startswith("-"):
            raise ValueError(arg)
        starts.append(arg)
        index += 1
    return starts or ["."], tests


def _find_matches(fs: FileSystem, path: str, depth: int, tests: dict[str, str]) -> bool:
    base = path.rsplit("/", 1)[-1] or "/"
    if "-name" in tests and not fnmatch.fnmatchcase(base, tests["-name"]):
        return False
    if "-iname" in tests and not fnmatch.fnmatch(base.lower(), tests["-iname"].lower()):
        return False
    if "-type" in tests and tests["-type"] != ("d" if fs.is_dir(path) else "f"):
        return False
    return depth >= int(tests.get("-mindepth", "0"))


@tool("find")
def find(io: ToolIO, argv: list[str]) -> int:
    """``find [PATH...] [-name GLOB] [-type f|d] [-maxdepth N]``: depth first, as listed."""
    try:
        starts, tests = _find_options(argv[1:])
    except ValueError as exc:
        io.err(f"find: Unknown option '{exc}'\n")
        return 1
    limit = int(tests.get("-maxdepth", "1000"))

    def walk(fs: FileSystem, start: str, root: str) -> str | None:
        if not fs.exists(root):
            return f"'{start}': {ENOENT}"
        stack = [(root, start, 0)]
        while stack:
            path, shown, depth = stack.pop()
            if _find_matches(fs, path, depth, tests):
                io.out(shown + "\n")
            if fs.is_dir(path) and depth < limit:
                children = fs.listdir(path)
                stack.extend(
                    (fs.normalize(c, path), shown.rstrip("/") + "/" + c, depth + 1)
                    for c in reversed(children)
                )
        return None

    return each_operand(io, "find", starts, walk)


# ------------------------------------------------------------------ dd, df


def _dd_operands(argv: list[str]) -> dict[str, str]:
    return dict(a.split("=", 1) for a in argv[1:] if "=" in a)


def _size(text: str) -> int:
    units = {"k": 1024, "K": 1024, "m": 1 << 20, "M": 1 << 20, "g": 1 << 30, "G": 1 << 30}
    if text and text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)


@tool("dd")
def dd(io: ToolIO, argv: list[str]) -> int:
    """``dd [if=F] [of=F] [bs=N] [count=N]``; the summary goes to stderr as toybox prints it."""
    ops = _dd_operands(argv)
    block = _size(ops.get("bs", "512"))
    with io.phone.lock:
        fs = io.phone.fs
        if "if" in ops:
            try:
                data = fs.read(fs.normalize(ops["if"], io.cwd))
            except (FileNotFoundError, IsADirectoryError):
                io.err(f"dd: {ops['if']}: {ENOENT}\n")
                return 1
        else:
            data = io.stdin
        if "count" in ops:
            data = data[: block * int(ops["count"])]
        full, partial = divmod(len(data), block)
        if "of" in ops:
            fs.write(fs.normalize(ops["of"], io.cwd), data)
        else:
            io.stdout.write(data)
    records = f"{full}+{1 if partial else 0} records"
    io.err(f"{records} in\n{records} out\n{len(data)} bytes ({_human(len(data))}) copied, "
           "0.001 s, 0 B/s\n")  # fmt: skip
    return 0


def _human(size: int) -> str:
    for unit in ("B", "K", "M", "G"):
        if size < 1024 or unit == "G":
            return f"{size} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size //= 1024
    return str(size)


# Mounts a Pixel lists for ``df`` (1K blocks), from captured output of Android 12+ phones.
MOUNTS = (
    ("/dev/block/dm-5", 6120768, 6101484, 0, "/"),
    ("tmpfs", 3788316, 1356, 3786960, "/dev"),
    ("/dev/block/dm-47", 115653468, 20157276, 95364048, "/data"),
    ("/dev/fuse", 115653468, 20157276, 95364048, "/storage/emulated"),
)


def _storage(path: str) -> str:
    """``/sdcard`` is a link to the emulated storage (``/storage/self/primary``)."""
    if path == "/sdcard" or path.startswith("/sdcard/"):
        return "/storage/emulated/0" + path[len("/sdcard") :]
    return path


@tool("df")
def df(io: ToolIO, argv: list[str]) -> int:
    """``df [PATH...]``: ``Filesystem 1K-blocks Used Available Use% Mounted on``."""
    _flags, _values, operands = split_flags(argv)
    mounts = list(MOUNTS)
    if operands:
        wanted = [_storage(io.phone.fs.normalize(o, io.cwd)) for o in operands]
        mounts = [max((m for m in MOUNTS if w.startswith(m[4])), key=lambda m: len(m[4]))
                  for w in wanted]  # fmt: skip
    io.out("Filesystem        1K-blocks     Used Available Use% Mounted on\n")
    for source, total, used, avail, target in mounts:
        percent = -(-used * 100 // total) if total else 0
        io.out(f"{source:<17} {total:>9} {used:>8} {avail:>9} {percent:>3}% {target}\n")
    return 0
