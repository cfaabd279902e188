"""At most ``limit`` requests of one provider in flight, whichever loop or thread sends them.

Rule kept here: a provider's ``max_concurrency`` holds across everything that shares the
provider object: the runs of one loop (an explanation's reruns, gathered), and the runs of
other loops in other threads (``run_sync`` inside Jupyter drives its run on a private loop
in a worker thread). An ``asyncio.Semaphore`` belongs to one loop, so the count lives behind
a thread lock instead, and a waiter is woken on its own loop (``call_soon_threadsafe``).

A slot freed while others wait is handed straight to the oldest waiter, so nobody is
overtaken. A waiter cancelled after it was handed a slot passes the slot on; a waiter whose
loop closed while it waited is skipped. So a cancelled or abandoned run never keeps a slot.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class _Waiter:
    __slots__ = ("future", "granted", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.future: asyncio.Future[None] = loop.create_future()
        self.granted = False  # set under the gate's lock when a slot is handed over


class Gate:
    """A counting gate shared by every loop and thread; ``async with gate.slot():`` holds one place."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._busy = 0
        self._waiting: deque[_Waiter] = deque()

    @property
    def in_flight(self) -> int:
        """How many slots are held right now."""
        return self._busy

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        await self._acquire()
        try:
            yield
        finally:
            self._release()

    async def _acquire(self) -> None:
        with self._lock:
            if self._busy < self.limit and not self._waiting:
                self._busy += 1
                return
            waiter = _Waiter(asyncio.get_running_loop())
            self._waiting.append(waiter)
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
            while self._waiting:
                waiter = self._waiting.popleft()
                if waiter.loop.is_closed():
                    continue  # nobody is left to take it
                waiter.granted = True  # the slot changes hands: _busy stays as it is
                try:
                    waiter.loop.call_soon_threadsafe(_wake, waiter.future)
                except RuntimeError:  # the loop closed just now
                    continue
                return
            self._busy -= 1


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():  # a cancelled waiter passes its slot on itself (Gate._acquire)
        future.set_result(None)
