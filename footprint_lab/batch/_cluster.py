"""Sending a run set's work to a Dask cluster: in chunks, with settings shipped once per chunk, results as DataFrames.

Rule kept: ``client=`` is a ``dask.distributed.Client`` or nothing, checked before anything is
sent, and whatever must travel (a factory, a comparator, claims) is serialized with cloudpickle
here first and rebuilt once on a worker, so a factory that cannot travel (or that a worker cannot
import) is refused by name before any work is sent, instead of failing on a worker.
The work goes out as a few tasks per worker thread (never one task per run: scheduling a task
costs more than checking a run), each task a chunk of runs; results come back as DataFrames
in chunk order, so the rows are in the set's order whatever finished first. A cancellation
(a notebook's Stop, ``task.cancel()``, a progress function that raises) cancels every future
still out before it reaches the caller.

Dask is the optional extra ``footprint_lab[dask]``; nothing here imports it before a client is given.
"""

from __future__ import annotations

import asyncio
import math
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from footprint_lab.base.progress import stopping
from footprint_lab.base.refusal import describe_shape
from footprint_lab.batch._progress import Bar
from footprint_lab.batch._work import RemoteRefusal, rebuilt
from footprint_lab.batch.refusals import BatchConfigError

if TYPE_CHECKING:
    import pandas as pd

#: tasks per worker thread: enough to even out chunks that take longer, few enough to cost nothing
CHUNKS_PER_THREAD = 4


def check_client(function: str, client: Any) -> Any:
    """``client`` when it is a ``dask.distributed.Client`` (or ``None``); refused otherwise."""
    if client is None:
        return None
    try:
        from distributed import Client
    except ImportError:
        raise BatchConfigError(function, "client", describe_shape(client),
                               "needs Dask: pip install 'footprint_lab[dask]' (dask and distributed), then pass "
                               "client=Client(cluster)") from None
    if not isinstance(client, Client):
        raise BatchConfigError(function, "client", describe_shape(client),
                               "must be a dask.distributed.Client (Client(LocalCluster()) on this machine, or a "
                               "client of any Dask cluster), or None to work in this process")
    if client.status != "running":
        raise BatchConfigError(function, "client", "a client that is closed",
                               "must be a running client: make a new one, e.g. Client(cluster)")
    return client


def ship(function: str, setting: str, value: Any, client: Any) -> bytes:
    """``value`` serialized for the workers, or refused when it cannot travel: when it cannot be pickled here,
    or when a worker cannot rebuild it (a function from a module only this machine can import)."""
    import cloudpickle

    try:
        payload: bytes = cloudpickle.dumps(value)
    except Exception:  # what cannot be pickled varies (locks, sockets, weak references); the type says enough
        raise BatchConfigError(
            function, setting, "something that cannot be sent to another process",
            "must be able to travel to the workers: pass a factory (a function that builds the agent, e.g. "
            "def build(exclude=(), seed=None): ...) rather than an agent, and keep open connections, locks and "
            "clients out of what it captures",
        ) from None
    problem = client.submit(rebuild_problem, payload, pure=False, retries=0).result()
    if problem is not None:
        raise BatchConfigError(
            function, setting, f"something a worker cannot rebuild ({problem})",
            "must be importable on the workers: install the module that defines it on every worker, or define the "
            "factory in the notebook or script that calls this method, so it travels whole",
        )
    return payload


def rebuild_problem(payload: bytes) -> str | None:
    """On a worker: the type of the error unpickling ``payload`` raises there, or ``None`` when it rebuilds."""
    import cloudpickle

    try:
        cloudpickle.loads(payload)
    except Exception as error:  # a missing module, a class that changed: the type names it
        return type(error).__name__
    return None


def threads(client: Any) -> int:
    """How many tasks the cluster runs at once."""
    workers = client.scheduler_info().get("workers", {})
    return max(1, sum(int(worker.get("nthreads", 1)) for worker in workers.values()))


def chunked(items: Sequence[Any], slots: int) -> list[list[Any]]:
    """``items`` in order, in about ``CHUNKS_PER_THREAD`` chunks per slot."""
    size = max(1, math.ceil(len(items) / (slots * CHUNKS_PER_THREAD)))
    return [list(items[start:start + size]) for start in range(0, len(items), size)]


class _Out:
    """The chunks of one call, out on the cluster: each frame taken as its future finishes, in chunk order."""

    def __init__(self, client: Any, task: Callable[..., Any], chunks: list[list[Any]], payload: bytes,
                 bar: Bar) -> None:
        name = f"footprint-lab-{task.__name__.replace('_', '-')}-{uuid.uuid4().hex[:8]}"
        self.client = client
        self.chunks = chunks
        self.bar = bar
        self.futures = [client.submit(task, chunk, payload, key=f"{name}-{number}", pure=False, retries=0)
                        for number, chunk in enumerate(chunks)]
        self.frames: list[Any] = [None] * len(chunks)
        self.waiting = set(range(len(chunks)))

    def take(self) -> None:
        """Take every frame that is ready (a refusal raised on a worker is raised here, as itself)."""
        for number in sorted(n for n in self.waiting if self.futures[n].done()):
            try:
                self.frames[number] = self.futures[number].result()
            except RemoteRefusal as remote:
                raise rebuilt(remote) from None
            self.waiting.discard(number)
            self.bar.advance(len(self.chunks[number]))

    def pending(self) -> list[Any]:
        return [self.futures[n] for n in self.waiting]

    def stop(self) -> None:
        """The call was cancelled or failed: nothing of it keeps running on the cluster."""
        self.client.cancel(self.futures)
        self.bar.cancel()


def gather(client: Any, task: Callable[..., Any], chunks: list[list[Any]], payload: bytes,
           bar: Bar, kept: Callable[[list[pd.DataFrame]], Any], where: str) -> list[pd.DataFrame]:
    """Run the chunks on the cluster and wait; the frames in chunk order. Stopped (an interrupt), nothing keeps
    running on the cluster and :class:`Stopped` carries what ``kept`` makes of the chunks that came back (said
    as ``where`` says, see :func:`base.progress.stopping`)."""
    from distributed import wait

    out = _Out(client, task, chunks, payload, bar)
    try:
        with stopping(bar, lambda: kept([frame for frame in out.frames if frame is not None]), where):
            while out.waiting:
                wait(out.pending(), return_when="FIRST_COMPLETED")
                out.take()
    except BaseException:
        out.stop()
        raise
    return out.frames


async def gather_async(client: Any, task: Callable[..., Any], chunks: list[list[Any]], payload: bytes,
                       bar: Bar, *, poll: float = 0.05) -> list[pd.DataFrame]:
    """As :func:`gather`, awaiting: the event loop stays free while the cluster works, and cancelling stops it."""
    out = _Out(client, task, chunks, payload, bar)
    try:
        while out.waiting:
            await asyncio.sleep(poll)
            out.take()
    except BaseException:
        out.stop()
        raise
    bar.finish()
    return out.frames
