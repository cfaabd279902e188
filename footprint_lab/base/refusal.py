"""The two roots of every error a user can meet: refused before running, or failed while running.

Rule: an error tells the truth about what happened. A :class:`Refusal` fires at a door
that received something it cannot use, *before anything runs*: nothing is billed, nothing
is half-recorded, and the runner's state is left as it was. A :class:`RunFailure` happens
*while running* (a provider answered 429, a call timed out, a tool raised): steps ran, calls
may have been charged, and the error says what was done and where it is kept. Both share
one shape (:class:`CodedError`); every one

- carries a stable ``code`` (``ERR_...``) that programs branch on,
- describes what arrived by its shape, never by its value (the caller's data, a
  secret or an identity is never quoted),
- teaches the fix in its message,
- keeps its evidence in typed attributes, which the notebook lab renders as a card.

Refusals live next to the door that raises them; ``footprint_lab.errors`` gathers them. A
refusal of a bad value the caller passed is also a ``ValueError`` (every setting refusal, an
invalid checkpoint, a composition built wrong), and one of a keyword a builder does not take a
``TypeError``, so code written against the built-in exceptions catches them; a refusal about
state (a turn in flight, a pending question) is neither, and a ``RunFailure`` never is.
"""

from __future__ import annotations

import difflib
import inspect
import os
import sysconfig
from collections.abc import Callable, Collection, Iterable, Sequence
from types import CodeType
from typing import Any, ClassVar

from footprint_lab.base.unicode import sound_text


class CodedError(Exception):
    """The shape every footprint_lab error shares: a ``code``, a teaching message, typed ``fields``."""

    code: ClassVar[str] = "ERR_FOOTPRINT_LAB"
    #: The names of the attributes that carry this error's evidence (rendered on cards).
    fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def evidence(self) -> dict[str, Any]:
        """The typed fields of this error, by name (what a card shows beside the message)."""
        return {name: getattr(self, name, None) for name in self.fields}

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its class, message and attributes (each subclass's ``__init__`` takes its own arguments,
        so rebuilding it by calling the class with ``args`` would fail in the process that unpickles it)."""
        return _unpickled, (type(self), self.args, dict(self.__dict__))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """A displayed refusal is its card (the lab's renderer, through ``base.display``)."""
        return show_error(self, include, exclude)


def _unpickled(cls: type[CodedError], args: tuple[Any, ...], state: dict[str, Any]) -> CodedError:
    """A pickled error as it was: built without its ``__init__``, then given its args and attributes."""
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


def show_error(error: Exception, include: Any = None, exclude: Any = None) -> dict[str, Any]:
    """The display bundle of a refusal or a run failure: its card beside one line of text."""
    from footprint_lab.base.display import bundle

    line = f"{type(error).__name__} [{getattr(error, 'code', '')}]: {error}"
    return bundle("refusal", error, lambda: {"text/plain": line}, include, exclude)


class Refusal(CodedError):
    """A caller's mistake, refused at a door before anything ran."""

    code: ClassVar[str] = "ERR_REFUSED"


class RunFailure(CodedError):
    """Something failed while running (after the door let the run in); what was done is kept.

    Not a caller's mistake refused up front: steps ran and calls may have been charged. Each
    subclass says where what was done is kept (a checkpoint, the failed exchange) and, in
    ``retryable`` or ``resumable``, whether trying again can help.
    """

    code: ClassVar[str] = "ERR_RUN_FAILED"


class UnknownKeywordError(Refusal, TypeError):
    """Raised when a builder is given a keyword it does not take (a misspelt setting, most often).

    A ``TypeError`` too, as Python's own refusal of an unexpected keyword is.

    Carries ``function`` (the builder), ``unknown`` (how many keywords it does not take; they
    are not quoted) and ``known`` (the keywords it takes). The message names the known keyword
    nearest to one of those given, when one is near.
    """

    code = "ERR_UNKNOWN_KEYWORD"
    fields = ("function", "unknown", "known")

    def __init__(self, function: str, unknown: Sequence[str], known: Sequence[str]) -> None:
        near = did_you_mean(unknown, known)
        count = len(unknown)
        super().__init__(
            f"{function}: its keywords are {', '.join(known)}{'; ' + near if near else ''} (received {count} "
            f"keyword{'s' if count != 1 else ''} it does not take)."
        )
        self.function = function
        self.unknown = count
        self.known = list(known)


class SettingRefusal(Refusal, ValueError):
    """Base of the refusals for a builder keyword that no run could use.

    A bad value (or a value of the wrong type) for a setting, so a ``ValueError`` too:
    ``except ValueError`` catches ``Agent(max_iterations=-1)`` as it would a bad argument anywhere.

    Carries ``setting`` (the keyword at fault) and ``received`` (its shape, never its value);
    the message names the builder, the setting and what a usable value looks like.
    """

    fields: ClassVar[tuple[str, ...]] = ("setting", "received")

    def __init__(self, runner: str, setting: str, received: str, fix: str) -> None:
        super().__init__(f"{runner}: '{setting}' {fix} (received {received}).")
        self.setting = setting
        self.received = received


class CallSettingRefusal(SettingRefusal):
    """A setting refusal that also keeps ``function``: the function or method that was called with it."""

    fields: ClassVar[tuple[str, ...]] = ("function", "setting", "received")

    def __init__(self, function: str, setting: str, received: str, fix: str) -> None:
        super().__init__(function, setting, received, fix)
        self.function = function


def describe_shape(value: object, known: Collection[str] = ()) -> str:
    """Describe a value by its shape, never by its content.

    ``None``, ``a list of 3``, ``a dict with no keys``, ``a dict with keys: message and 1 other key``,
    ``a dict with 2 keys (not shown)``, ``an int``. A dict's keys are named only when they are among
    ``known``, the field names of the door that describes it (``message``, ``identity``...); any other
    key is counted, however short, because a key the caller chose can itself be data (a name, an id, a
    token).
    """
    if value is None:
        return "None"
    if isinstance(value, list | tuple | set | frozenset):
        return f"a {type(value).__name__} of {len(value)}"
    if isinstance(value, dict):
        if not value:
            return "a dict with no keys"
        named = [k for k in value if isinstance(k, str) and k in known]
        if not named:
            return f"a dict with {len(value)} key{'s' if len(value) != 1 else ''} (not shown)"
        others = len(value) - len(named)
        more = f" and {others} other key{'s' if others != 1 else ''}" if others else ""
        return f"a dict with keys: {', '.join(named)}{more}"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def did_you_mean(given: Iterable[str], known: Iterable[str]) -> str:
    """``"did you mean 'name'?"`` naming the known name nearest to one of ``given``, or ``""`` when none is near.

    Only the known name is said, never what was given (it may be the caller's data); so the
    known names must be names a message may show (ids, settings, provider names, never secrets).
    """
    near = nearest(given, known)
    return f"did you mean '{near}'?" if near is not None else ""


def nearest(given: Iterable[str], known: Iterable[str], cutoff: float = 0.7) -> str | None:
    """The known name nearest to one of ``given`` (the first that has one near), or ``None``."""
    names = list(dict.fromkeys(known))
    for name in given:
        near = difflib.get_close_matches(name, names, n=1, cutoff=cutoff) if isinstance(name, str) else []
        if near:
            return near[0]
    return None


#: where code that is not the caller's lives: the standard library, installed packages, this package
_NOT_OWN = tuple(dict.fromkeys(os.path.normcase(os.path.abspath(path)) + os.sep for path in (
    *(sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")),
    os.path.dirname(os.path.dirname(__file__)))))
#: how much of an exception's message a failure keeps
MESSAGE_LIMIT = 300


def raised(exc: BaseException, clean: Callable[[Any], Any], *, entry: CodeType | None = None
           ) -> tuple[str, str, str | None]:
    """What a recorded failure keeps of an exception: its type's name, its message and its frame.

    The message is masked by ``clean`` (the run's redaction policy) before it is cut to
    :data:`MESSAGE_LIMIT` characters, so a covered value cut short cannot slip through. The
    frame (``file:line in function``) is the innermost one in the caller's own code, outside
    the standard library, installed packages and footprint_lab; with ``entry`` (the code that
    called the caller's function), only frames below it count, and the first of them is kept
    when none is the caller's own. ``None`` when there is none.
    """
    try:
        text = str(exc)
    except Exception:  # a message that cannot be read is said to be so
        text = "(its message could not be read)"
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame.f_code, tb.tb_lineno))
        tb = tb.tb_next
    if entry is not None:
        below = [at for at, (code, _) in enumerate(frames) if code is entry]
        frames = frames[below[0] + 1:] if below else []
    own = [frame for frame in frames
           if not os.path.normcase(os.path.abspath(frame[0].co_filename)).startswith(_NOT_OWN)]
    chosen = own[-1] if own else frames[0] if entry is not None and frames else None
    frame = None if chosen is None else clean(f"{chosen[0].co_filename}:{chosen[1]} in {chosen[0].co_qualname}")
    message = sound_text(str(clean(text)))
    if len(message) > MESSAGE_LIMIT:
        message = message[:MESSAGE_LIMIT - 1] + "…"
    return type(exc).__name__, message, frame


def call_problem(value: object, count: int) -> str | None:
    """``None`` when ``value`` can be called with ``count`` positional arguments, else its shape.

    A class, a function of the wrong arity or a keyword-only function is refused at the door
    that takes it, not when a run first calls it (where a listener's error would be swallowed
    and a guard's would fail the run). A callable whose signature cannot be read (some
    builtins) is given the benefit of the doubt.
    """
    if isinstance(value, type):
        return "a class"
    if not callable(value):
        return describe_shape(value)
    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(*range(count))
    except TypeError:
        return f"a function that cannot be called with {count} argument{'s' if count != 1 else ''}"
    return None
