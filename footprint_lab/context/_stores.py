"""Memory stores for ``define_memory``: one in memory, one in SQLite (stdlib ``sqlite3``, a file path).

Rule kept here: a store keeps items under a *namespace* string and never reads across
namespaces. The agent hands the store the run's namespace (the injective encoding of the
run's identity: tenant, principal and conversation id, or the run's own conversation when
no identity was named), so two people, or two tenants, can never recall each other's items.
The store does not build or parse namespaces; it only compares them whole.

An item is a dict ``{"key", "role", "content", "run_id"}``: ``key`` is unique within its
store (the recording cites it), ``run_id`` is the run that wrote it (so an explanation can
walk to that run's recording). ``recall`` returns the latest ``limit`` items, oldest first.

A store is anything with ``recall(namespace, *, limit)`` and ``remember(namespace, items)``.
Role: context layer.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from footprint_lab.context.refusals import ContextDeclarationError


class MemoryStore(Protocol):
    """What ``define_memory`` needs of a store."""

    def recall(self, namespace: str, *, limit: int) -> list[dict[str, Any]]:
        """The latest ``limit`` items of ``namespace``, oldest first."""
        ...

    def remember(self, namespace: str, items: Iterable[Mapping[str, Any]]) -> None:
        """Append items (``role``, ``content``, ``run_id``) to ``namespace``."""
        ...


class InMemoryStore:
    """Items kept in this process, per namespace; gone when the process ends."""

    def __init__(self) -> None:
        self._items: dict[str, list[dict[str, Any]]] = {}
        self._count = 0
        self._lock = threading.Lock()

    def recall(self, namespace: str, *, limit: int) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(item) for item in self._items.get(namespace, [])[-limit:]]

    def remember(self, namespace: str, items: Iterable[Mapping[str, Any]]) -> None:
        with self._lock:
            kept = self._items.setdefault(namespace, [])
            for item in items:
                self._count += 1
                kept.append({"key": str(self._count), "role": str(item["role"]), "content": str(item["content"]),
                             "run_id": item.get("run_id")})


class SQLiteStore:
    """Items kept in a SQLite file (or ``":memory:"``), safe to share between threads of one process."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        import sqlite3

        if not isinstance(path, str | os.PathLike) or (isinstance(path, str) and not path.strip()):
            raise ContextDeclarationError(
                "SQLiteStore", "path", path, "must be a file path (str or pathlib.Path), or ':memory:'",
            )
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        with self._lock, self._db:
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS memory_items ("
                " key INTEGER PRIMARY KEY AUTOINCREMENT, namespace TEXT NOT NULL,"
                " role TEXT NOT NULL, content TEXT NOT NULL, run_id TEXT)"
            )
            self._db.execute("CREATE INDEX IF NOT EXISTS memory_items_by_namespace ON memory_items (namespace, key)")

    def recall(self, namespace: str, *, limit: int) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT key, role, content, run_id FROM memory_items WHERE namespace = ? ORDER BY key DESC LIMIT ?",
                (namespace, limit),
            ).fetchall()
        return [{"key": str(key), "role": role, "content": content, "run_id": run_id}
                for key, role, content, run_id in reversed(rows)]

    def remember(self, namespace: str, items: Iterable[Mapping[str, Any]]) -> None:
        rows = [(namespace, str(item["role"]), str(item["content"]), item.get("run_id")) for item in items]
        with self._lock, self._db:
            self._db.executemany(
                "INSERT INTO memory_items (namespace, role, content, run_id) VALUES (?, ?, ?, ?)", rows
            )

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()

    def __repr__(self) -> str:
        return "SQLiteStore(...)"
