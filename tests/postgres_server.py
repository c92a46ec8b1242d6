"""A throwaway PostgreSQL server for tests and benchmarks (Debian's binaries).

    server = PostgresServer.start()      # initdb in a temp dir, pg_ctl start on a free port
    url = server.create_database("t1")   # postgresql://phoned@127.0.0.1:PORT/t1
    server.stop()                        # pg_ctl stop -m immediate, temp dir removed

The cluster listens on 127.0.0.1 only, with its unix socket inside the temp dir. As root
(initdb refuses root) every server command runs as the ``postgres`` system user via
``runuser``, and the temp dir belongs to that user. ``shared()`` is one lazily started
server per test session (``stop_shared()`` at session end). Without the binaries,
``skip_reason()`` says why; ``scripts/ensure-postgres.sh`` installs them.
"""

from __future__ import annotations

import glob
import hashlib
import os
import pwd
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest

from scripts.stack import free_port

SUPERUSER = "phoned"
RUN_AS = "postgres"


def find_bin_dir() -> Path | None:
    """The newest ``/usr/lib/postgresql/*/bin`` holding initdb, else initdb on PATH."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: (
            int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0
        ),
    )
    if candidates:
        return Path(candidates[-1]).parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def skip_reason() -> str | None:
    """Why a throwaway server cannot start here, or None when it can."""
    if find_bin_dir() is None:
        return "PostgreSQL binaries (initdb, pg_ctl) not found: run scripts/ensure-postgres.sh"
    if os.geteuid() == 0 and not _user_exists(RUN_AS):
        return f"running as root and no {RUN_AS!r} user to run initdb as"
    return None


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _as_server_user(argv: list[str]) -> list[str]:
    """``argv`` run as the ``postgres`` user when we are root (initdb refuses root)."""
    if os.geteuid() == 0:
        return ["runuser", "-u", RUN_AS, "--", *argv]
    return argv


def run_time_seconds(pid: int) -> float:
    """CPU time process ``pid`` has run so far, from its scheduler run time
    (``/proc/PID/schedstat``, nanoseconds); 0 when it is gone or not on this machine.
    ``stat``'s utime+stime move in clock ticks (10 ms) and can lag by several, too coarse
    for calls well under a millisecond."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


@dataclass
class PostgresServer:
    """A running throwaway cluster; ``url`` names its ``postgres`` database."""

    bin_dir: Path
    root: Path
    port: int
    durable: bool = False
    databases: list[str] = field(default_factory=list)
    # every server process cpu_seconds has seen, with the last run time it read of it
    _run_times: dict[int, float] = field(default_factory=dict, repr=False)

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres", schema: str | None = None) -> str:
        """A libpq URL for ``database`` (and, optionally, ``search_path`` = ``schema``)."""
        base = f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"
        if schema is None:
            return base
        return f"{base}?options={quote(f'-c search_path={schema}', safe='')}"

    @classmethod
    def start(cls, *, durable: bool = False, max_connections: int = 200) -> PostgresServer:
        """initdb into a fresh temp dir and start the server; raise RuntimeError on failure.

        ``durable=False`` turns fsync off (fast tests); benchmarks pass ``durable=True``.
        """
        bin_dir = find_bin_dir()
        if bin_dir is None:
            raise RuntimeError("PostgreSQL binaries not found")
        root = Path(tempfile.mkdtemp(prefix="phoned-pg-"))
        server = cls(bin_dir, root, free_port(), durable)
        try:
            server._initdb()
            server._pg_ctl_start(max_connections)
        except BaseException:
            server.stop()
            raise
        return server

    def _run(self, argv: list[str]) -> None:
        proc = subprocess.run(
            _as_server_user(argv), capture_output=True, text=True, timeout=120, check=False
        )
        if proc.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed ({proc.returncode}): {proc.stderr.strip()}")

    def _initdb(self) -> None:
        if os.geteuid() == 0:
            user = pwd.getpwnam(RUN_AS)
            os.chown(self.root, user.pw_uid, user.pw_gid)
        self._run(
            [
                str(self.bin_dir / "initdb"),
                "-D",
                str(self.data_dir),
                "-U",
                SUPERUSER,
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ]
        )

    def _pg_ctl_start(self, max_connections: int) -> None:
        settings = {
            "listen_addresses": "127.0.0.1",
            "port": str(self.port),
            "unix_socket_directories": str(self.root),
            "max_connections": str(max_connections),
            "shared_buffers": "32MB",
            "fsync": "on" if self.durable else "off",
            "synchronous_commit": "on" if self.durable else "off",
            "full_page_writes": "on" if self.durable else "off",
        }
        options = " ".join(f"-c {k}={v}" for k, v in settings.items())
        log = self.root / "server.log"
        self._run(
            [
                str(self.bin_dir / "pg_ctl"),
                "-D",
                str(self.data_dir),
                "-l",
                str(log),
                "-o",
                options,
                "-w",
                "-t",
                "60",
                "start",
            ]
        )

    def create_database(self, name: str) -> str:
        """Create database ``name`` (once) and return its URL."""
        if name not in self.databases:
            with psycopg.connect(self.url(), autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{name}"'.encode())
            self.databases.append(name)
        return self.url(name)

    def create_schema(self, database: str, schema: str) -> str:
        """Create ``schema`` in ``database`` if missing; the URL whose search_path is it."""
        with psycopg.connect(self.url(database), autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'.encode())
        return self.url(database, schema)

    def cpu_seconds(self) -> float | None:
        """CPU time the server's processes have used so far (Linux ``/proc``), or None.

        The postmaster and its children (backends, WAL writer, checkpointer, autovacuum)
        by their run time (``run_time_seconds``); a process that has exited since an
        earlier reading keeps the run time read then. So two readings never go backwards,
        and their difference is what the server spent in between, less what processes
        spent after the first reading and exited before the second (read while the
        processes that did the work are still alive)."""
        try:
            postmaster = int((self.data_dir / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:  # split after "(comm)": [0] state (proc(5) field 3), [1] ppid (field 4)
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # exited meanwhile
            pid = int(entry.name)
            if postmaster in (pid, ppid):
                ran = run_time_seconds(pid)
                self._run_times[pid] = max(ran, self._run_times.get(pid, 0.0))
        return sum(self._run_times.values())

    def stop(self) -> None:
        """Stop the server (immediate mode) and remove its directory; idempotent."""
        if (self.data_dir / "postmaster.pid").exists():
            subprocess.run(
                _as_server_user(
                    [
                        str(self.bin_dir / "pg_ctl"),
                        "-D",
                        str(self.data_dir),
                        "-m",
                        "immediate",
                        "-w",
                        "stop",
                    ]
                ),
                capture_output=True,
                timeout=60,
                check=False,
            )
        shutil.rmtree(self.root, ignore_errors=True)


_shared: PostgresServer | None = None
_shared_lock = threading.Lock()


def shared() -> PostgresServer:
    """The session's server, started on first use."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = PostgresServer.start()
        return _shared


def stop_shared() -> None:
    """Stop the session's server if one was started."""
    global _shared
    with _shared_lock:
        if _shared is not None:
            _shared.stop()
            _shared = None


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A database on the session's throwaway server; skipped (failed under CI) without one.

    Import it into a conftest or test module: ``from postgres_server import postgres_url``.
    """
    reason = skip_reason()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs PostgreSQL: {reason}")
        pytest.skip(reason)
    yield shared().create_database("phoned_test")
    stop_shared()


def fresh_schema_url(key: str) -> str:
    """A URL on the shared server whose ``search_path`` is a schema named after ``key``.

    The same key gives the same schema (a second connection to the same queue).
    """
    schema = "t_" + hashlib.sha1(key.encode()).hexdigest()[:20]
    server = shared()
    server.create_database("phoned_test")
    return server.create_schema("phoned_test", schema)
