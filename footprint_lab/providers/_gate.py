"""One concurrency gate per endpoint in the process, whichever loop, thread or provider sends.

Rule kept here: requests to one endpoint (scheme, host and port: the host lower-cased, the
scheme's default port filled in) share one :class:`Gate`, however many provider objects aim
at it. A factory that builds a fresh provider for every rerun (as most people write one)
would otherwise hand a server that serves one request at a time a request per provider at
once, and llama.cpp's stock Python server cuts a reply short when a second one arrives.

Each provider claims its ``max_concurrency`` on its endpoint's gate, and the gate admits at
most the **smallest limit among the live providers aimed at it**: the strictest one wins,
since the server is the same whoever asks, and a provider asking for 1 says the server takes
one at a time. A claim is held by a weak reference, so a provider that is dropped (collected)
stops constraining the gate, and a larger limit then applies from the next request.
Providers aimed at a hosted service share its limit the same way (16 between them, not 16
each).

The gate holds across everything that shares it: the runs of one loop (an explanation's
reruns, gathered), and the runs of other loops in other threads (``run_sync`` inside
Jupyter drives its run on a private loop in a worker thread). An ``asyncio.Semaphore``
belongs to one loop, so the count lives behind a thread lock instead, and a waiter is woken
on its own loop (``call_soon_threadsafe``).

A slot freed while others wait is handed straight to the oldest waiter, so nobody is
overtaken. A waiter cancelled after it was handed a slot passes the slot on; a waiter whose
loop closed while it waited is skipped. So a cancelled or abandoned run never keeps a slot.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

#: The port a URL means when it names none.
_DEFAULT_PORTS = {"http": 80, "https": 443}


class _Waiter:
    __slots__ = ("future", "granted", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.future: asyncio.Future[None] = loop.create_future()
        self.granted = False  # set under the gate's lock when a slot is handed over


class Gate:
    """A counting gate shared by every loop and thread; ``async with gate.slot():`` holds one place.

    ``limit`` applies until a holder claims a limit of its own (:meth:`claim`); from then on
    the gate admits the smallest limit among the holders still alive.
    """

    def __init__(self, limit: int) -> None:
        self._base_limit = limit
        self._claims: list[tuple[weakref.ref[object], int]] = []
        self._lock = threading.Lock()
        self._busy = 0
        self._waiting: deque[_Waiter] = deque()

    @property
    def in_flight(self) -> int:
        """How many slots are held right now."""
        return self._busy

    @property
    def limit(self) -> int:
        """How many slots may be held at once right now."""
        with self._lock:
            return self._limit()

    def claim(self, holder: object, limit: int) -> None:
        """Count ``limit`` against this gate for as long as ``holder`` lives (held weakly)."""
        with self._lock:
            self._claims.append((weakref.ref(holder), limit))
            self._admit()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        await self._acquire()
        try:
            yield
        finally:
            self._release()

    def _limit(self) -> int:
        """The smallest limit claimed by a live holder; dead claims are dropped. Under the lock."""
        if not self._claims:
            return self._base_limit
        live = [(ref, limit) for ref, limit in self._claims if ref() is not None]
        if len(live) != len(self._claims):
            self._claims = live
        return min((limit for _, limit in live), default=self._base_limit)

    async def _acquire(self) -> None:
        with self._lock:
            if not self._waiting and self._busy < self._limit():
                self._busy += 1
                return
            waiter = _Waiter(asyncio.get_running_loop())
            self._waiting.append(waiter)
            self._admit()  # the limit may have risen since the last release (a holder was dropped)
        try:
            await waiter.future
        except asyncio.CancelledError:
            with self._lock:
                granted = waiter.granted
                if not granted:
                    self._waiting.remove(waiter)
            if granted:  # the slot arrived as the wait was cancelled: it goes to the next in line
                self._release()
            raise

    def _release(self) -> None:
        with self._lock:
            self._busy -= 1
            self._admit()

    def _admit(self) -> None:
        """Hand free slots to the oldest waiters still able to take them. Under the lock."""
        limit = self._limit()
        while self._waiting and self._busy < limit:
            waiter = self._waiting.popleft()
            if waiter.loop.is_closed():
                continue  # nobody is left to take it
            waiter.granted = True
            try:
                waiter.loop.call_soon_threadsafe(_wake, waiter.future)
            except RuntimeError:  # the loop closed just now
                continue
            self._busy += 1


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():  # a cancelled waiter passes its slot on itself (Gate._acquire)
        future.set_result(None)


def endpoint(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of ``url``: the host lower-cased, the scheme's default port filled in."""
    parsed = httpx.URL(url)
    scheme = parsed.scheme.lower()
    return scheme, parsed.host.lower(), parsed.port or _DEFAULT_PORTS.get(scheme, 0)


_gates: weakref.WeakValueDictionary[tuple[str, str, int], Gate] = weakref.WeakValueDictionary()
_gates_lock = threading.Lock()


def gate_for(url: str, holder: object, limit: int) -> Gate:
    """The process's gate for ``url``'s endpoint, with ``limit`` claimed on it while ``holder`` lives.

    The gate lives as long as some holder keeps it (a wire holds its gate); the next provider
    aimed at an endpoint nobody holds any more starts a new one.
    """
    key = endpoint(url)
    with _gates_lock:
        gate = _gates.get(key)
        if gate is None:
            gate = _gates[key] = Gate(limit)
        gate.claim(holder, limit)
    return gate
