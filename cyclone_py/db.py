"""DSN resolution and the project's embedded PostgreSQL 15 cluster.

The DSN comes from, in order: an explicit argument, ``CYCLONE_DSN``,
``DATABASE_URL``, else the embedded cluster (see :class:`EmbeddedCluster`):
``cyclone dev-db start`` starts it; the few commands that set a database up or
serve it (``migrate``, ``worker``, ``conformance``) start it on demand and say
so in one line, unless ``cyclone dev-db stop`` stopped it; every other command
(reads, actions on runs) only uses it when it runs, and says how to start it
otherwise (docs/cli.md, Choosing the database).

The schema that ``cyclone migrate`` deploys is the sqitch project carried by
the package itself (:func:`sqitch_project`), so an installed wheel deploys
from any folder.

The embedded cluster listens on a unix socket only (``listen_addresses =
''``), so it never touches a PostgreSQL already running on the machine.
When we run as root, the cluster lives under ``/var/tmp`` and belongs to the
``postgres`` OS user, so it works whatever the permissions of the clone.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import importlib.resources
import logging
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import psycopg
from psycopg import conninfo, sql

logger = logging.getLogger(__name__)

PG_BIN = Path(os.environ.get("CYCLONE_PG_BIN", "/usr/lib/postgresql/15/bin"))
DBNAME = "cyclone"
SUPERUSER = "postgres"
OS_USER = "postgres"

StopMode = Literal["smart", "fast", "immediate"]
#: What an on-demand start did: initialised a new cluster, or started a stopped one.
Started = Literal["created", "started"]

SQITCH_MISSING = (
    "sqitch is not installed (no sqitch on PATH): on Debian or Ubuntu run "
    "`apt-get install sqitch libdbd-pg-perl`; elsewhere see https://sqitch.org/download/"
)
STOPPED_BY_USER = (
    "the embedded database was stopped with `cyclone dev-db stop`; run `cyclone dev-db start` or pass --dsn"
)
#: Where a command that does not start the embedded database (:meth:`EmbeddedCluster.require_running`)
#: points its user; ``{home}`` is the cluster's folder.
NOT_CREATED = (
    "no --dsn or CYCLONE_DSN given, and there is no embedded database in {home} yet: `cyclone dev-db start` "
    "creates and starts it (then `cyclone migrate` deploys the engine), or set CYCLONE_DSN or pass --dsn"
)
NOT_RUNNING = (
    "no --dsn or CYCLONE_DSN given, and the embedded database in {home} is not running: start it with "
    "`cyclone dev-db start`, or set CYCLONE_DSN or pass --dsn"
)


class EmbeddedDBError(RuntimeError):
    """The embedded PostgreSQL cluster could not be managed."""


class SqitchError(EmbeddedDBError):
    """sqitch failed; ``detail`` is its first error line (None when it printed none)."""

    def __init__(self, command: str, returncode: int, detail: str | None) -> None:
        super().__init__(f"sqitch {command} failed" + (f": {detail}" if detail else f" (exit {returncode})"))
        self.command = command
        self.returncode = returncode
        self.detail = detail


#: What this module's own connections raise (the driver's base error), so that
#: a face can report it without importing the driver.
DatabaseError = psycopg.Error


def repo_root(package_dir: Path | None = None) -> Path:
    """The folder the embedded cluster belongs to: ``CYCLONE_ROOT``, else the
    checkout holding this package (an editable install), else one folder per
    user (``$XDG_DATA_HOME/cyclone``, by default ``~/.local/share/cyclone``), so
    that commands run from any folder share one embedded database."""
    env = os.environ.get("CYCLONE_ROOT")
    if env:
        return Path(env).resolve()
    here = (package_dir or Path(__file__).resolve().parent).parent
    if (here / "pyproject.toml").exists() or (here / "sqitch.plan").exists():
        return here
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return (Path(data) / "cyclone").resolve()


def _repo_hash(root: Path) -> str:
    return hashlib.sha1(str(root).encode()).hexdigest()


def _is_root() -> bool:
    return os.geteuid() == 0


@dataclass(frozen=True)
class EmbeddedCluster:
    """A throwaway PostgreSQL 15 cluster private to one checkout."""

    home: Path
    port: int
    dbname: str = DBNAME
    user: str = SUPERUSER
    #: More postgresql.conf settings (name, value as written in the file), for
    #: a replicated pair (:func:`replicated_pair`): written on every start.
    settings: tuple[tuple[str, str], ...] = ()

    @classmethod
    def for_repo(cls, root: Path | None = None) -> EmbeddedCluster:
        root = (root or repo_root()).resolve()
        digest = _repo_hash(root)
        env_home = os.environ.get("CYCLONE_HOME")
        if env_home:
            home = Path(env_home).resolve()
        elif _is_root():
            home = Path("/var/tmp") / f"cyclone-{digest[:12]}"
        else:
            home = root / ".cyclone" / "pg"
        port = 20000 + int(digest, 16) % 10000
        return cls(home=home, port=port)

    # -- layout ---------------------------------------------------------------

    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    @property
    def socket_dir(self) -> Path:
        run = self.home / "run"
        # A unix socket path must fit in 107 bytes (".s.PGSQL.NNNNN" included).
        if len(str(run).encode()) <= 80:
            return run
        digest = hashlib.sha1(str(self.home).encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"cyclone-{os.geteuid()}-{digest}"

    @property
    def log_file(self) -> Path:
        return self.home / "log" / "postgres.log"

    @property
    def lock_file(self) -> Path:
        return self.home.parent / f".{self.home.name}.lock"

    @property
    def stop_marker(self) -> Path:
        """Written by ``cyclone dev-db stop``: on-demand starts refuse until ``start()``."""
        return self.home / "stopped-by-user"

    def url(self, dbname: str | None = None) -> str:
        """The libpq DSN of database ``dbname`` (default ``cyclone``)."""
        return conninfo.make_conninfo(
            host=str(self.socket_dir),
            port=str(self.port),
            user=self.user,
            dbname=dbname or self.dbname,
        )

    def env(self, dbname: str | None = None) -> dict[str, str]:
        """PG* variables for psql, sqitch and pg_prove."""
        return {
            "PGHOST": str(self.socket_dir),
            "PGPORT": str(self.port),
            "PGUSER": self.user,
            "PGDATABASE": dbname or self.dbname,
        }

    # -- process helpers ------------------------------------------------------

    def _run(self, args: Sequence[str | Path], *, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [str(a) for a in args]
        if _is_root():
            cmd = ["runuser", "-u", OS_USER, "--", *cmd]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = env.get("LC_ALL") or "C.UTF-8"
        # cwd: the postgres OS user may not be able to read the caller's cwd.
        cwd = self.home if self.home.exists() else Path("/")
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
        if check and proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            last = detail[-1] if detail else f"exit {proc.returncode}"
            what = " ".join(str(a) for a in [Path(str(args[0])).name, *args[1:2]] if not str(a).startswith("-"))
            raise EmbeddedDBError(f"{what} failed: {last} (log: {self.log_file})")
        return proc

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.lock_file.parent.mkdir(parents=True, exist_ok=True)
        with open(self.lock_file, "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _chown(self, *paths: Path) -> None:
        if _is_root():
            for p in paths:
                shutil.chown(p, user=OS_USER, group=OS_USER)

    # -- lifecycle ------------------------------------------------------------

    def initialized(self) -> bool:
        return (self.data_dir / "PG_VERSION").exists()

    def _init(self) -> None:
        if not (PG_BIN / "initdb").exists():
            raise EmbeddedDBError(f"PostgreSQL 15 binaries not found in {PG_BIN} (run scripts/bootstrap.sh)")
        self.home.mkdir(parents=True, exist_ok=True)
        self.home.chmod(0o700)
        self._chown(self.home)
        logger.info("initdb", extra={"data_dir": str(self.data_dir)})
        self._run([
            PG_BIN / "initdb", "-D", self.data_dir, "-U", self.user,
            "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync",
        ])
        with open(self.data_dir / "postgresql.conf", "a") as fh:
            fh.write("\n# Cyclone embedded cluster\ninclude 'cyclone.conf'\n")

    def _write_config(self) -> None:
        for d in (self.socket_dir, self.log_file.parent):
            d.mkdir(parents=True, exist_ok=True)
            self._chown(d)
        conf = self.data_dir / "cyclone.conf"
        conf.write_text(
            "# Written by cyclone_py.db on every start; edit db.py, not this file.\n"
            "listen_addresses = ''\n"
            f"unix_socket_directories = '{self.socket_dir}'\n"
            f"port = {self.port}\n"
            "max_connections = 200\n"
            "shared_preload_libraries = 'pg_cron'\n"
            f"cron.database_name = '{self.dbname}'\n"
            # Jobs run in background workers, not over a libpq connection to
            # cron.host (localhost over TCP, where this cluster does not listen;
            # and each job row keeps the host it was scheduled on, which after
            # a failover is the old primary).
            "cron.use_background_workers = on\n"
            "timezone = 'UTC'\n"
            "log_timezone = 'UTC'\n"
            "logging_collector = off\n"
            + "".join(f"{name} = {value}\n" for name, value in self.settings)
        )
        self._chown(conf)

    def status(self) -> bool:
        """True if the cluster's postmaster is running."""
        if not self.initialized():
            return False
        return self._run([PG_BIN / "pg_ctl", "status", "-D", self.data_dir], check=False).returncode == 0

    def start(self, timeout: float = 60.0) -> str:
        """Initialise (first time) and start the cluster; idempotent.  Clears a
        stop by the user (:meth:`stop` with ``by_user``).  Returns the DSN."""
        self._start(timeout, explicit=True)
        return self.url()

    def start_on_demand(self, timeout: float = 60.0) -> Started | None:
        """Start the cluster for a command that targets it, as :meth:`start` does,
        unless the user stopped it (then :class:`EmbeddedDBError`, one line).
        Returns what it did: ``"created"``, ``"started"``, or None (it ran)."""
        return self._start(timeout, explicit=False)

    def _start(self, timeout: float, *, explicit: bool) -> Started | None:
        did: Started | None = None
        with self._locked():
            if explicit:
                self.stop_marker.unlink(missing_ok=True)
            if not self.initialized():
                self._init()
                did = "created"
            if not self.status():
                if self.stop_marker.exists():
                    raise EmbeddedDBError(STOPPED_BY_USER)
                self._write_config()
                self._run([
                    PG_BIN / "pg_ctl", "start", "-D", self.data_dir, "-l", self.log_file,
                    "-w", "-t", str(int(timeout)),
                ])
                did = did or "started"
            self._wait_ready(timeout)
            self._ensure_database()
        return did

    def require_running(self) -> None:
        """For a command that uses the cluster but does not start it (a read, an action on a run):
        :class:`EmbeddedDBError` whose one line says how to start it, or to name another
        database, unless it runs."""
        if self.status():
            return
        if not self.initialized():
            raise EmbeddedDBError(NOT_CREATED.format(home=self.home))
        if self.stop_marker.exists():
            raise EmbeddedDBError(STOPPED_BY_USER)
        raise EmbeddedDBError(NOT_RUNNING.format(home=self.home))

    def started_notice(self, did: Started) -> str:
        """The line a command prints when it started the cluster on demand."""
        return (f"no --dsn or CYCLONE_DSN given: {did} the embedded PostgreSQL 15 in {self.home} "
                "(unix socket only); set CYCLONE_DSN or pass --dsn to use your own database")

    def stop(self, mode: StopMode = "fast", *, by_user: bool = False) -> None:
        """Stop the cluster if it runs.  ``by_user`` (``cyclone dev-db stop``): it
        stays stopped, on-demand starts refuse, until :meth:`start`."""
        with self._locked():
            if by_user and self.initialized():
                self.stop_marker.touch()
            if self.status():
                self._run([PG_BIN / "pg_ctl", "stop", "-D", self.data_dir, "-m", mode, "-w", "-t", "60"])

    def restart(self, mode: StopMode = "fast", timeout: float = 60.0) -> str:
        """Stop (``immediate`` simulates a crash: recovery runs on start) and start again."""
        self.stop(mode)
        return self.start(timeout)

    def destroy(self) -> None:
        """Stop the cluster and delete its files."""
        self.stop("immediate")
        with self._locked():
            shutil.rmtree(self.home, ignore_errors=True)
            shutil.rmtree(self.socket_dir, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            self.lock_file.unlink()

    # -- replication (a primary and its streaming standby) -------------------

    def standby_spec(self, home: Path, port: int, *, name: str = "standby") -> EmbeddedCluster:
        """The cluster at ``home`` that would stream this one's WAL as standby
        ``name`` (its ``application_name``, what ``synchronous_standby_names``
        names); :meth:`create_standby` makes and starts it."""
        source = conninfo.make_conninfo(host=str(self.socket_dir), port=str(self.port), user=self.user,
                                        application_name=name)
        quoted = "'" + source.replace("'", "''") + "'"
        return EmbeddedCluster(home=home, port=port, dbname=self.dbname, user=self.user,
                               settings=(("primary_conninfo", quoted),))

    def create_standby(self, standby: EmbeddedCluster, timeout: float = 120.0) -> EmbeddedCluster:
        """Copy this running cluster with ``pg_basebackup`` into ``standby``
        (made by :meth:`standby_spec`), mark it a standby and start it; it
        serves reads (hot standby) and streams WAL from here."""
        with standby._locked():
            if standby.initialized():
                raise EmbeddedDBError(f"{standby.data_dir} already holds a cluster")
            standby.home.mkdir(parents=True, exist_ok=True)
            standby.home.chmod(0o700)
            standby._chown(standby.home)
            standby._run([PG_BIN / "pg_basebackup", "-D", standby.data_dir, "-h", self.socket_dir,
                          "-p", str(self.port), "-U", self.user, "-X", "stream", "-c", "fast", "--no-sync"])
            signal_file = standby.data_dir / "standby.signal"
            signal_file.touch()
            standby._chown(signal_file)
        standby.start(timeout)
        return standby

    def reload(self) -> None:
        """Rewrite the configuration (with :attr:`settings`) and make the running
        server read it (``pg_ctl reload``)."""
        with self._locked():
            self._write_config()
            self._run([PG_BIN / "pg_ctl", "reload", "-D", self.data_dir])

    def in_recovery(self) -> bool:
        """True while this cluster is a standby (not yet promoted)."""
        with psycopg.connect(self.url("postgres"), autocommit=True, connect_timeout=5) as c:
            return c.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)

    def promote(self, timeout: float = 60.0) -> None:
        """Promote this standby to a primary (``pg_ctl promote``), waiting until
        it accepts writes."""
        self._run([PG_BIN / "pg_ctl", "promote", "-D", self.data_dir, "-w", "-t", str(int(timeout))])
        deadline = time.monotonic() + timeout
        while self.in_recovery():
            if time.monotonic() > deadline:
                raise EmbeddedDBError(f"{self.home} still in recovery {timeout:.0f}s after pg_ctl promote")
            time.sleep(0.05)

    # -- scratch databases (tests and benchmarks) ---------------------------

    def admin(self) -> psycopg.Connection[tuple[object, ...]]:
        """An autocommit superuser connection to the ``postgres`` database."""
        return psycopg.connect(self.url("postgres"), autocommit=True)

    def create_database(self, name: str, *, template: str | None = None) -> str:
        """Create database ``name`` (a copy of ``template`` when given); its URL."""
        create_database(self.url("postgres"), name, template=template)
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drop ``name`` if it exists, a template too, whatever sessions it has."""
        drop_database(self.url("postgres"), name)

    def deploy_template(self, name: str) -> None:
        """(Re)create ``name`` with the schema deployed by sqitch, as a template
        nobody may connect to (a template must be idle while it is copied)."""
        self.drop_database(name)
        sqitch(["deploy"], self.create_database(name), quiet=True)
        with self.admin() as c:
            c.execute(sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS false IS_TEMPLATE true")
                      .format(sql.Identifier(name)))

    def drop_stale_databases(self, pattern: str) -> None:
        """Drop the databases whose name matches ``pattern`` (a regular
        expression whose first group is the pid of the process that made them)
        when that process no longer exists: left behind by a killed run."""
        with self.admin() as c:
            rows = c.execute("SELECT datname, (regexp_match(datname, %s))[1] FROM pg_database "
                             "WHERE datname ~ %s", (pattern, pattern)).fetchall()
        for name, pid in rows:
            if int(str(pid)) != os.getpid() and not pid_alive(int(str(pid))):
                with contextlib.suppress(psycopg.Error):
                    self.drop_database(str(name))

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                with psycopg.connect(self.url("postgres"), connect_timeout=5, autocommit=True) as c:
                    c.execute("SELECT 1")
                return
            except psycopg.OperationalError as exc:  # starting up / recovering
                last = exc
                time.sleep(0.1)
        raise EmbeddedDBError(f"embedded database not ready after {timeout:.0f}s: {last}")

    def ensure_database(self, name: str) -> str:
        """Create database ``name`` when it is missing; its DSN."""
        self._ensure_database(name)
        return self.url(name)

    def _ensure_database(self, dbname: str | None = None) -> None:
        name = dbname or self.dbname
        with psycopg.connect(self.url("postgres"), autocommit=True) as c:
            if c.execute("SELECT pg_is_in_recovery()").fetchone() == (True,):
                return  # a standby: its databases are the primary's
            exists = c.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            if not exists:
                with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                    c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (ours or another user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def embedded() -> EmbeddedCluster:
    """The embedded cluster of this checkout."""
    return EmbeddedCluster.for_repo()


def replicated_pair(home: Path, *, synchronous: bool = True,
                    port: int = 5432) -> tuple[EmbeddedCluster, EmbeddedCluster]:
    """A primary (``home/primary``) and its streaming standby (``home/standby``),
    both started, each on its own unix socket only (``port`` names the socket
    file; nothing listens on TCP). With ``synchronous`` the primary waits for
    the standby to confirm each commit (``synchronous_standby_names =
    'standby'``, ``synchronous_commit = on``); without, it does not wait, and
    a failover can lose the last commits. :func:`multi_host_url` points
    clients at both. For tests: stop both with :meth:`EmbeddedCluster.destroy`."""
    primary = EmbeddedCluster(home=home / "primary", port=port)
    primary.start()
    standby = primary.create_standby(primary.standby_spec(home / "standby", port))
    if synchronous:
        # Only now: a synchronous primary without its standby waits on every commit.
        primary = dataclasses.replace(
            primary, settings=(("synchronous_standby_names", "'standby'"), ("synchronous_commit", "on")))
        primary.reload()
    return primary, standby


def multi_host_url(clusters: Sequence[EmbeddedCluster], dbname: str | None = None) -> str:
    """One DSN naming every cluster, for whichever is the primary now
    (``target_session_attrs=read-write``): libpq tries them in turn and keeps
    the first that accepts writes, so a client reconnects to a promoted
    standby on its own."""
    return conninfo.make_conninfo(
        host=",".join(str(c.socket_dir) for c in clusters),
        port=",".join(str(c.port) for c in clusters),
        user=clusters[0].user,
        dbname=dbname or clusters[0].dbname,
        target_session_attrs="read-write",
    )


# -- databases on any server ---------------------------------------------------
# Server-level statements, shared by the embedded cluster and the test
# harness's scratch databases (cyclone_py.testing.Template, through client.py,
# which translates their driver errors).


def with_database(dsn: str, dbname: str) -> str:
    """``dsn`` pointing at database ``dbname`` instead (same server, role, options)."""
    return conninfo.make_conninfo(dsn, dbname=dbname)


def conninfo_params(dsn: str) -> dict[str, object]:
    """The parameters a DSN (key=value or URI) sets."""
    return dict(conninfo.conninfo_to_dict(dsn))


def with_options(dsn: str, **options: str | int | None) -> str:
    """``dsn`` with these parameters set (as a key=value conninfo)."""
    return conninfo.make_conninfo(dsn, **options)


def without_password(dsn: str) -> str:
    """``dsn`` to show: its password, if any, replaced by ``***``."""
    return with_options(dsn, password="***") if conninfo_params(dsn).get("password") else dsn


def _server(dsn: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(dsn, autocommit=True, connect_timeout=10)


def create_database(dsn: str, name: str, *, template: str | None = None) -> str:
    """``CREATE DATABASE name [TEMPLATE template]`` on ``dsn``'s server; the new database's DSN."""
    query = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if template is not None:
        query = sql.SQL("{} TEMPLATE {}").format(query, sql.Identifier(template))
    with _server(dsn) as c:
        c.execute(query)
    return with_database(dsn, name)


def close_database(dsn: str, name: str) -> None:
    """Forbid new connections to ``name`` (a template must be idle to be copied)."""
    with _server(dsn) as c:
        c.execute(sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS false").format(sql.Identifier(name)))


def drop_database(dsn: str, name: str) -> None:
    """``DROP DATABASE IF EXISTS name WITH (FORCE)`` on ``dsn``'s server, a template too."""
    ident = sql.Identifier(name)
    with _server(dsn) as c:
        if c.execute("SELECT 1 FROM pg_database WHERE datname = %s AND datistemplate", (name,)).fetchone():
            c.execute(sql.SQL("ALTER DATABASE {} WITH IS_TEMPLATE false").format(ident))
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))


def resolve_dsn(dsn: str | None = None, *, start: bool = False, running: bool = False,
                notice: Callable[[str], object] | None = None) -> str:
    """Explicit ``dsn``, else ``CYCLONE_DSN``, else ``DATABASE_URL``, else the embedded
    database.  With ``start``, the embedded database is started on demand
    (:meth:`EmbeddedCluster.start_on_demand`) and ``notice`` gets the one line
    that says so when it was not running; with ``running`` instead, it must be
    running already (:meth:`EmbeddedCluster.require_running`)."""
    for candidate in (dsn, os.environ.get("CYCLONE_DSN"), os.environ.get("DATABASE_URL")):
        if candidate:
            return candidate
    cluster = embedded()
    if start:
        did = cluster.start_on_demand()
        if did is not None and notice is not None:
            notice(cluster.started_notice(did))
    elif running:
        cluster.require_running()
    return cluster.url()


def pg_env(dsn: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment for psql/sqitch/pg_prove pointing at ``dsn`` (PGHOST, PGPORT,
    PGUSER, PGDATABASE, plus PGPASSWORD/PGSSLMODE when the DSN has them)."""
    params = conninfo.conninfo_to_dict(dsn)
    env = {k: v for k, v in (base if base is not None else os.environ).items() if not k.startswith("PG")}
    mapping = {
        "host": "PGHOST", "port": "PGPORT", "user": "PGUSER", "dbname": "PGDATABASE",
        "password": "PGPASSWORD", "sslmode": "PGSSLMODE", "options": "PGOPTIONS",
        "application_name": "PGAPPNAME",
    }
    for key, var in mapping.items():
        value = params.get(key)
        if value is not None and value != "":
            env[var] = str(value)
    # Prefer the real PostgreSQL 15 client tools over any wrapper on PATH.
    if PG_BIN.is_dir():
        env["PATH"] = f"{PG_BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def dsn_label(dsn: str) -> str:
    """A DSN without its password, to name a database in a log line or an
    error: ``dbname@host:port`` (the parts the DSN gives), or ``a malformed
    DSN`` when it does not parse."""
    try:
        params = conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "a malformed DSN"
    host, port = params.get("host"), params.get("port")
    return dbname_of(dsn) + (f"@{host}" if host else "") + (f":{port}" if port else "")


def dbname_of(dsn: str) -> str:
    """The database a DSN names (libpq default: the user name)."""
    params = conninfo.conninfo_to_dict(dsn)
    name = params.get("dbname") or params.get("user") or os.environ.get("PGDATABASE") or os.environ.get("USER", "")
    return str(name)


def sqitch_project() -> Path:
    """The folder of the sqitch project (``sqitch.conf``, ``sqitch.plan``,
    ``sql/deploy|revert|verify``) that matches this code: in a checkout (an
    editable install too) the repo root, else ``cyclone_py/sqitch`` of the
    installed package, where the wheel carries a copy."""
    checkout = Path(__file__).resolve().parent.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "sqitch.plan").is_file():
        return checkout
    return _packaged("sqitch")


def router_project() -> Path:
    """The router's sqitch project (docs/scaling.md), as :func:`sqitch_project`
    finds the engine's: ``router/`` of a checkout, else ``cyclone_py/router_sqitch``."""
    checkout = Path(__file__).resolve().parent.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "router" / "sqitch.plan").is_file():
        return checkout / "router"
    return _packaged("router_sqitch")


def _packaged(folder: str) -> Path:
    packaged = importlib.resources.files(__package__ or "cyclone_py") / folder
    if not isinstance(packaged, Path) or not (packaged / "sqitch.plan").is_file():
        raise EmbeddedDBError(f"the installed cyclone_py carries no sqitch project ({packaged}); reinstall it")
    return packaged


def sqitch_executable() -> str:
    """The ``sqitch`` on PATH, else :class:`EmbeddedDBError` saying how to get it."""
    exe = shutil.which("sqitch")
    if exe is None:
        raise EmbeddedDBError(SQITCH_MISSING)
    return exe


#: A line of psql's that reports the error itself (not a NOTICE or a WARNING before it).
_ERROR_LINE = re.compile(r"\b(?:ERROR|FATAL|PANIC):")


def sqitch(args: Sequence[str], dsn: str, *, quiet: bool = False,
           project: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``sqitch <args> db:pg:<dbname>`` against ``dsn`` in ``project`` (default
    :func:`sqitch_project`, the engine; :func:`router_project` for a router);
    raises :class:`SqitchError` with sqitch's first error line on failure
    (:class:`EmbeddedDBError`, :data:`SQITCH_MISSING`, when there is no sqitch)."""
    exe = sqitch_executable()
    project = project or sqitch_project()
    cmd = [exe, *(["--quiet"] if quiet else []), *args, f"db:pg:{dbname_of(dsn)}"]
    proc = subprocess.run(
        cmd, cwd=project, env=pg_env(dsn), text=True,
        stdout=subprocess.PIPE if quiet else None, stderr=subprocess.PIPE,
    )
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr or "").splitlines() if ln.strip()]
        lines = [ln for ln in lines if "unexpectedly returned" not in ln] or lines
        # psql's notices (a DROP ... IF EXISTS that found nothing) come before the error that stopped the
        # script: the error's line, when there is one, is the one to say.
        lines = [ln for ln in lines if _ERROR_LINE.search(ln)] or lines
        raise SqitchError(args[0], proc.returncode, lines[0].strip() if lines else None)
    return proc
