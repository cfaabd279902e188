"""What every runner shares: subscriptions, ``run`` / ``run_sync``, and where it is mounted.

``async def run()`` is the one implementation; ``run_sync()`` only drives it. In a plain
script it uses ``asyncio.run``; inside a running event loop (a Jupyter kernel) it runs the
coroutine on a private loop in a worker thread and waits, so the same call works in both.
In a notebook, ``await runner.run(...)`` is the direct way.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import secrets
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, ClassVar

from footprint_lab.core.door import normalize_run_input
from footprint_lab.core.identity import coerce_identity
from footprint_lab.core.run import Run
from footprint_lab.engine.recorder import event_stream
from footprint_lab.engine.refusal import Refusal, call_problem, describe_shape

Listener = Callable[[Any], None]


class ListenerError(Refusal):
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
    return listener


def new_run_id() -> str:
    """A fresh, unguessable run id."""
    return "run-" + secrets.token_hex(6)


@dataclass(slots=True)
class Mount:
    """Where one execution of a runner happens: a top-level run, or a member in a composition.

    ``path`` prefixes the step ids (empty at top level); ``listeners`` receive events (held
    as the run's :class:`~footprint_lab.engine.recorder.EventStream`, which a member's mount
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

    async def run(self, input: Any = None, /, *, on_event: Listener | None = None, identity: Any = None) -> Run:
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

    def run_sync(self, input: Any = None, /, **keywords: Any) -> Run:
        """Run to completion from synchronous code, inside a running event loop or not."""
        return run_coroutine_sync(self.run(input, **keywords))


def ended_status(exc: BaseException) -> str:
    """How a run that raised ``exc`` ended: ``cancelled`` (by its caller) or ``failed``."""
    return "cancelled" if isinstance(exc, asyncio.CancelledError) else "failed"


def _no_run() -> None:
    return None


def run_coroutine_sync(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Drive a coroutine to completion from synchronous code."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="footprint-run") as pool:
        return pool.submit(asyncio.run, coroutine).result()
