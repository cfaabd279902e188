"""What every runner shares: subscriptions, ``run`` / ``run_sync``, and where it is mounted.

``async def run()`` is the one implementation; ``run_sync()`` only drives it, on a loop kept
for synchronous callers instead of a new one per call (starting and closing a loop cost more
than a whole scripted run, and a kept loop keeps its provider connections for the next run):

- from a thread with no running loop (a script), on that thread's own loop, made on its
  first ``run_sync`` and closed when the thread ends or the interpreter exits;
- inside a running loop (a Jupyter kernel), on one private loop in a daemon worker thread,
  shared by every such caller, and waited for; a ``run_sync`` made from that worker's own
  loop (a tool that runs an agent synchronously) gets a fresh thread and loop, as it would
  otherwise wait on itself.

In a notebook, ``await runner.run(...)`` is the direct way.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import inspect
import secrets
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar, cast

from footprint_lab.base.refusal import Refusal, UnknownKeywordError, call_problem, describe_shape
from footprint_lab.core.door import RunInput, normalize_run_input
from footprint_lab.core.identity import IdentityInput, coerce_identity
from footprint_lab.core.run import Run
from footprint_lab.record.events import event_stream

Listener = Callable[[Any], None]


class ListenerError(Refusal, TypeError):
    """Raised by ``subscribe(fn)`` and ``run(..., on_event=fn)`` when ``fn`` cannot receive an event.

    A listener that raises never breaks a run, so one that cannot even be called would lose
    every event without a word; it is refused where it is handed over instead. Carries
    ``door`` and ``received`` (its shape).
    """

    code = "ERR_LISTENER"
    fields = ("door", "received")

    def __init__(self, door: str, received: str) -> None:
        super().__init__(
            f"{door}: a listener is a function of one event, e.g. on_event=print or "
            f"subscribe(lambda event: print(event.type)) (received {received})."
        )
        self.door = door
        self.received = received


def check_listener(listener: Any, door: str) -> Listener:
    """The listener, or a refusal when it cannot be called with one event."""
    problem = call_problem(listener, 1)
    if problem is not None:
        raise ListenerError(door, problem)
    return cast("Callable[[Any], None]", listener)


def new_run_id() -> str:
    """A fresh, unguessable run id."""
    return "run-" + secrets.token_hex(6)


@dataclass(slots=True)
class Mount:
    """Where one execution of a runner happens: a top-level run, or a member in a composition.

    ``path`` prefixes the step ids (empty at top level); ``listeners`` receive events (held
    as the run's :class:`~footprint_lab.record.recorder.EventStream`, which a member's mount
    shares, so one counter numbers the events of the whole run);
    ``identity`` is set only when the caller named one; ``link`` is the parent run's
    registry link for a member (compositions); ``scrubber`` is the redaction a composition's
    run is covered by, handed to every member so that what one member's policy keeps out
    stays out of every record of the run; ``extra["resume"]``, when present, is the
    ``(checkpoint, answer)`` a composition hands the member it resumes.
    """

    run_id: str
    path: str = ""
    listeners: tuple[Listener, ...] = ()
    identity: Any = None
    link: str | None = None
    scrubber: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.listeners = event_stream(self.listeners)


class Runner:
    """Base of ``Agent``, ``LLMCall`` and every composition."""

    kind: ClassVar[str] = "runner"

    def __new__(cls, *args: Any, **keywords: Any) -> Any:
        """Refuse a keyword the class's builder does not take, before anything is built, naming the nearest one."""
        known = _keywords(cls) if keywords else None
        unknown = [name for name in keywords if known is not None and name not in known]
        if unknown:
            raise UnknownKeywordError(cls.__name__, unknown, known or ())
        return super().__new__(cls)

    def __init__(self, *, id: str | None = None, name: str | None = None) -> None:
        self.id = id
        self.name = name
        self._listeners: list[Listener] = []
        self._last_run_ref: Callable[[], Run | None] = _no_run

    @property
    def last_run(self) -> Run | None:
        """This instance's most recent run to end, while the caller still holds it (a failed or cancelled one always).

        A run that was cancelled (``task.cancel()``, ``asyncio.wait_for``, a notebook's Stop) or
        failed never reached its caller, so the instance keeps it: its ``recording`` (status
        ``cancelled`` or ``failed``) and, when a tool round had finished, its ``checkpoint``.
        A finished run is not kept alive by the instance alone: a runner that serves many
        requests would otherwise pin one recording per instance in memory. Runs of one
        composition instance may overlap; this is the one that ended last.
        """
        return self._last_run_ref()

    @last_run.setter
    def last_run(self, run: Run | None) -> None:
        if run is None:
            self._last_run_ref = _no_run
        elif run.status in ("failed", "cancelled"):
            self._last_run_ref = lambda: run
        else:
            self._last_run_ref = weakref.ref(run)

    async def _kept(self, execution: Awaitable[Run]) -> Run:
        """Await a top-level execution and keep the run it ends with, however it ends, as ``last_run``."""
        try:
            run = await execution
        except BaseException as exc:
            ended = getattr(exc, "_footprint_run", None)  # put there by the failing execution
            if isinstance(ended, Run):
                self.last_run = ended
            raise
        self.last_run = run
        return run

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Deliver every event of this runner's future runs to ``listener``; returns an unsubscribe."""
        self._listeners.append(check_listener(listener, f"{type(self).__name__}.subscribe"))

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _listeners_for(self, on_event: Listener | None) -> tuple[Listener, ...]:
        """This run's listeners; call it before anything runs, as it refuses an ``on_event`` that cannot listen."""
        if on_event is None:
            return tuple(self._listeners)
        return (*self._listeners, check_listener(on_event, self.door))

    @property
    def door(self) -> str:
        return f"{type(self).__name__}.run"

    async def run(self, input: RunInput = None, /, *, on_event: Listener | None = None,
                  identity: IdentityInput = None) -> Run:
        """Run once on ``input`` (a message string, or ``{"message": ...}``)."""
        bag = normalize_run_input(input, self.door, identity=identity)
        named = coerce_identity(bag.pop("identity", None), self.door)
        listeners = self._listeners_for(on_event)
        mount = Mount(run_id=new_run_id(), listeners=listeners, identity=named)
        return await self._kept(self._execute(bag, mount))

    async def _execute(self, bag: dict[str, Any], mount: Mount) -> Run:
        raise TypeError(f"{type(self).__name__} does not define how it executes")

    def _waiting_checkpoint(
        self, checkpoint: Any, door: str, *, run_id: str, owner: Any, redact: Any,
    ) -> tuple[Any, list[Any]]:
        """Read the checkpoint this runner left when it paused as a member of run ``run_id``, for ``door``.

        Returns it as this runner reads it, with the continuation of every agent waiting in it;
        refuses it by name when it is not one this runner could resume in that run for
        ``owner``. A runner that never pauses refuses every checkpoint.
        """
        from footprint_lab.core.checkpoint import InvalidCheckpointError

        raise InvalidCheckpointError(
            door, "checkpoint", describe_shape(checkpoint), f"is kept for a member ({self.kind}) that never pauses",
            "Resume a checkpoint on a composition built like the one that paused.",
        )

    def _failed_checkpoint(
        self, checkpoint: Any, door: str, *, run_id: str, owner: Any, redact: Any,
    ) -> tuple[Any, list[Any]]:
        """Read what this runner kept when it failed as a member of run ``run_id``, for ``door``; as above."""
        return self._waiting_checkpoint(checkpoint, door, run_id=run_id, owner=owner, redact=redact)

    def run_sync(self, input: RunInput = None, /, *, on_event: Listener | None = None,
                 identity: IdentityInput = None) -> Run:
        """Run to completion from synchronous code, inside a running event loop or not (``run``'s arguments)."""
        return run_coroutine_sync(self.run(input, on_event=on_event, identity=identity))


def _keywords(cls: type[Runner]) -> tuple[str, ...] | None:
    """The keywords ``cls(...)`` takes, in order; ``None`` when its builder takes any (``**keywords``)."""
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    return tuple(p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def ended_status(exc: BaseException) -> str:
    """How a run that raised ``exc`` ended: ``cancelled`` (by its caller) or ``failed``."""
    return "cancelled" if isinstance(exc, asyncio.CancelledError) else "failed"


def _no_run() -> None:
    return None


Result = TypeVar("Result")


def run_coroutine_sync(coroutine: Coroutine[Any, Any, Result]) -> Result:
    """Drive a coroutine to completion from synchronous code (see the module docstring)."""
    running = asyncio._get_running_loop()  # None outside a loop, where get_running_loop would raise
    if running is None:
        return _run_on(_thread_loop(), coroutine)
    worker = _worker_loop()
    if running is worker:
        with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="footprint-run") as pool:
            return pool.submit(asyncio.run, coroutine).result()
    future = asyncio.run_coroutine_threadsafe(coroutine, worker)
    try:
        return future.result()
    except BaseException:  # interrupted while waiting: the run is cancelled, not left running
        future.cancel()
        raise


def _run_on(loop: asyncio.AbstractEventLoop, coroutine: Coroutine[Any, Any, Result]) -> Result:
    """Run ``coroutine`` to its end on ``loop`` (not running); an interrupt cancels it rather than leaving it."""
    task = loop.create_task(coroutine)
    try:
        return loop.run_until_complete(task)
    except BaseException:
        if not task.done():  # Ctrl-C while waiting: cancel the run and let it close what it opened
            task.cancel()
            with contextlib.suppress(BaseException):
                loop.run_until_complete(task)
        raise


class _LoopHolder:
    """One thread's loop for ``run_sync``; closed (its async generators and connections with
    it) when the thread ends and drops its locals, or at interpreter exit.

    A plain loop driven with ``run_until_complete``: ``asyncio.Runner`` would install and
    remove a signal handler on every call, which costs about as much as a one-turn run.
    """

    __slots__ = ("loop",)

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def close(self) -> None:
        loop = self.loop
        if not loop.is_closed():
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
            finally:
                loop.close()

    def __del__(self) -> None:
        self.close()


_thread_loops = threading.local()


def _thread_loop() -> asyncio.AbstractEventLoop:
    holder: _LoopHolder | None = getattr(_thread_loops, "holder", None)
    if holder is None:
        holder = _thread_loops.holder = _LoopHolder()
    return holder.loop


_worker_lock = threading.Lock()
_worker: asyncio.AbstractEventLoop | None = None


def _worker_loop() -> asyncio.AbstractEventLoop:
    """The loop that runs ``run_sync`` calls made inside a running loop, started on first use."""
    global _worker
    with _worker_lock:
        if _worker is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="footprint-run-sync", daemon=True).start()
            _worker = loop
        return _worker


@atexit.register
def _close_loops() -> None:
    holder: _LoopHolder | None = getattr(_thread_loops, "holder", None)
    if holder is not None:
        del _thread_loops.holder
        holder.close()
    loop = _worker
    if loop is not None and not loop.is_closed():
        asyncio.run_coroutine_threadsafe(loop.shutdown_asyncgens(), loop).result(timeout=5)
        loop.call_soon_threadsafe(loop.stop)
