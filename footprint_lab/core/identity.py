"""Whom a run is for: ``Identity``, checked at the door, never guessed.

A run carries an identity only when its caller named one (``run(..., identity=...)``).
Then a tool sees it as ``ctx.identity`` and events carry its principal and tenant.
Without one, a run's memory namespace is its own conversation ``{conversation_id: run_id}``:
never a value shared by every caller, never a value left on a runner instance. A run that
continues a conversation (``follow_up``, ``continue_from=``, ``resume``, ``resume_on_error``)
is part of that conversation, so it keeps the namespace of the run that opened it (the
checkpoint's ``first_run_id``); a composition's members keep the namespace of the run they
serve (:mod:`footprint_lab.core.member_run`).

A dict is accepted and its shape checked; a refusal describes the shape, never the values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from footprint_lab.base.refusal import Refusal, describe_shape
from footprint_lab.base.unicode import is_sound

IDENTITY_FIELDS = ("conversation_id", "tenant", "principal")


class InvalidIdentityError(Refusal, ValueError):
    """Raised when ``identity=`` is not an ``Identity`` or a dict of its string fields.

    Carries ``door`` and ``received`` (the shape of what arrived; no value is quoted).
    """

    code = "ERR_INVALID_IDENTITY"
    fields = ("door", "received")

    def __init__(self, door: str, received: str) -> None:
        super().__init__(
            f"{door}: identity must be Identity(conversation_id=..., tenant=..., principal=...) or a dict "
            "with some of those keys, each a non-empty string, and at least one of them set "
            f"(received {received}). Leave identity out to run for nobody in particular: the run then "
            "uses its own run id as its conversation."
        )
        self.door = door
        self.received = received


@dataclass(frozen=True, slots=True)
class Identity:
    """The person and conversation a run serves; every field optional, at least one set."""

    conversation_id: str | None = None
    tenant: str | None = None
    principal: str | None = None

    def as_dict(self) -> dict[str, str]:
        """Only the fields that are set."""
        return {k: v for k in IDENTITY_FIELDS if (v := getattr(self, k)) is not None}

    def namespace(self) -> str:
        """An injective encoding of the three fields, for stores: distinct identities never collide."""
        return "|".join(
            "-" if (value := getattr(self, k)) is None else f"{len(value)}:{value}" for k in IDENTITY_FIELDS
        )


#: whom a run is for, as a type checker reads it: an ``Identity``, a mapping of its fields, or nobody
IdentityInput = Identity | Mapping[str, str | None] | None


def coerce_identity(value: object, door: str) -> Identity | None:
    """The caller's identity as an ``Identity`` (``None`` when none was named), or a refusal."""
    if value is None:
        return None
    if isinstance(value, Identity):
        fields = value.as_dict()
    elif isinstance(value, Mapping):
        unknown = [k for k in value if k not in IDENTITY_FIELDS]
        if unknown:
            raise InvalidIdentityError(door, f"a dict with {len(unknown)} unknown key(s)")
        fields = {k: v for k, v in value.items() if v is not None}
    else:
        raise InvalidIdentityError(door, describe_shape(value))
    bad = [k for k, v in fields.items() if not isinstance(v, str) or not v.strip()]
    if bad:
        raise InvalidIdentityError(door, f"an identity whose {', '.join(sorted(bad))} is not a non-empty string")
    unsound = [k for k, v in fields.items() if not is_sound(v)]
    if unsound:  # it is recorded with the run: it must be text that can be saved
        raise InvalidIdentityError(door, f"an identity whose {', '.join(sorted(unsound))} holds a lone surrogate")
    if not fields:
        raise InvalidIdentityError(door, "an identity with no field set")
    return value if isinstance(value, Identity) else Identity(**fields)


def memory_identity(identity: Identity | None, run_id: str) -> Identity:
    """The identity a run's memory is namespaced under: the named one, else the conversation of ``run_id``
    (the run that opened the conversation, for a run that continues one)."""
    return identity if identity is not None else Identity(conversation_id=run_id)
