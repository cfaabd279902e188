"""Checkpoints are a redaction surface: what they show is masked, what they resume with is real.

Rule kept: with a redaction policy in force, nothing a checkpoint *shows* (its fields,
``model_dump``, its JSON, ``repr``, a pickle, the card a notebook draws, an error carrying it)
holds a value the policy covers; those read ``[redacted:<name>]``, as the run's recording does.
The run still needs the real values to go on, so a checkpoint handed back by a run keeps them
in a private part that is never serialised, and a resume in the same process continues with
them exactly as before.

A checkpoint read back from a store has only its masks. Continuing it as it is would send the
model placeholders in place of the conversation without a word, so every door that continues
a conversation refuses it (:class:`MaskedCheckpointError`) until the caller says how:

- ``checkpoint.unmask({"[redacted:password]": value, ...})`` puts values back for the resume
  (a placeholder standing for a whole number or flag in tool arguments gets the value as given);
- ``checkpoint.accept_masked()`` continues with the placeholders the model will then read.

Both return a new checkpoint whose saved form is still masked. The private part is trusted
only while the checkpoint's fields are as they were written: an object edited in place is
read by its fields, like a stored one.

The labels a caller gave the runner (an agent's id, a composition's id and name, its member
names) are masked too, but only by the policy's own keys and patterns (:func:`shown_label`), never
by a value the run learned: they are what a resume matches the checkpoint on, so the same label
masks alike in every process, and a resume masks the live runner's labels the same way and
compares the masks.

Pattern: a pydantic base (:class:`Concealed`) with private attributes; each checkpoint kind
says which of its fields hold values (``_VALUE_FIELDS``) and how to reach them (``_map_values``).
Role: core layer; ``core.checkpoint`` and ``flow.checkpoint`` build on it.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar, Self, overload

from pydantic import BaseModel, PrivateAttr

from footprint_lab.base.refusal import Refusal, SettingRefusal, describe_shape
from footprint_lab.base.unicode import is_sound
from footprint_lab.redact.policy import PLACEHOLDER, Redaction

Mapper = Callable[[Any], Any]
#: a checkpoint's own seal (``footprint_lab.seal``) is not part of what its private values stand for
_OWN_SEAL = {"seal"}


class MaskedCheckpointError(Refusal):
    """Raised when a conversation would continue from a checkpoint whose values were masked.

    A checkpoint's saved form never holds what a redaction policy covers, so one read back from
    a store holds placeholders where those values were. Carries ``door`` and ``placeholders``
    (how many distinct masks it holds); no value, and no placeholder, is quoted.
    """

    code = "ERR_MASKED_CHECKPOINT"
    fields = ("door", "placeholders")

    def __init__(self, door: str, placeholders: int) -> None:
        super().__init__(
            f"{door}: this checkpoint holds {placeholders} masked value(s): its saved form keeps out what the "
            "run's redaction policy covers, so the model would read placeholders like '[redacted:<name>]' in "
            "their place. The checkpoint a run hands back resumes with the real values in the process that ran "
            "it; a stored one needs you to say how: checkpoint.unmask({placeholder: value, ...}) puts the values "
            "back for this resume (its saved form stays masked), or checkpoint.accept_masked() continues with "
            "the placeholders as they are. Read a stored one back with Checkpoint.model_validate_json(text) "
            "(FlowCheckpoint for a composition) first; its .masks lists the placeholders."
        )
        self.door = door
        self.placeholders = placeholders


class UnmaskArgumentError(SettingRefusal):
    """Raised by ``checkpoint.unmask(values)`` when ``values`` cannot put masked values back.

    Carries ``setting`` (``values``) and ``received`` (its shape; nothing given is quoted).
    """

    code = "ERR_UNMASK_ARGUMENT"

    def __init__(self, received: str, fix: str) -> None:
        super().__init__("Checkpoint.unmask", "values", received, fix)


def placeholders(value: Any) -> set[str]:
    """Every distinct mask in ``value`` (texts, keys and values of JSON data, at any depth)."""
    found: set[str] = set()

    def visit(item: Any) -> None:
        if isinstance(item, str):
            if "[redacted:" in item:
                found.update(PLACEHOLDER.findall(item))
        elif isinstance(item, dict):
            for key, inner in item.items():
                visit(key)
                visit(inner)
        elif isinstance(item, list | tuple):
            for inner in item:
                visit(inner)

    visit(value)
    return found


def put_back(values: Mapping[str, Any]) -> Mapper:
    """A mapper writing ``values`` over their placeholders: a whole-placeholder text becomes the value
    as given (so a masked number in tool arguments is a number again), one inside a text its string."""

    def text(item: str) -> Any:
        if item in values:
            return values[item]
        return PLACEHOLDER.sub(lambda m: str(values.get(m.group(0), m.group(0))), item)

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return text(item) if "[redacted:" in item else item
        if isinstance(item, dict):
            return {str(walk(key)): walk(inner) for key, inner in item.items()}
        if isinstance(item, list):
            return [walk(inner) for inner in item]
        return item

    return walk


@overload
def shown_label(label: str, policy: Redaction | None) -> str: ...
@overload
def shown_label(label: None, policy: Redaction | None) -> None: ...
@overload
def shown_label(label: str | None, policy: Redaction | None) -> str | None: ...
def shown_label(label: str | None, policy: Redaction | None) -> str | None:
    """A label a caller gave a runner (an id, a name, a member's name) as a checkpoint holds it: masked by
    ``policy``'s patterns alone, with no value a run learned, so it masks alike in every process and a
    resume can compare the live runner's label, masked the same way, with it."""
    if label is None or policy is None:
        return label
    return str(policy.for_run().scrub(label))


def map_value(value: Any, fn: Mapper) -> Any:
    """``fn`` applied to ``value`` unless it is absent (``None``)."""
    return None if value is None else fn(value)


class Concealed(BaseModel):
    """A checkpoint whose saved form is masked and whose real values stay in this process."""

    #: the fields that hold the run's values (the rest is structure: ids, versions, the policy)
    _VALUE_FIELDS: ClassVar[tuple[str, ...]] = ()

    #: the value fields as the run had them (JSON text), when they differ from the shown ones
    _real: str | None = PrivateAttr(default=None)
    #: the checkpoint's JSON when ``_real`` was set: the private part counts only while it is unchanged
    _shown: str | None = PrivateAttr(default=None)
    #: whether the door may go on with ``_real`` as it is (a run's own values, or placeholders accepted)
    _trusted: bool = PrivateAttr(default=False)
    #: values the run learned to mask (value -> mask), so the leg that continues masks them from its start
    _learned: dict[str, str] = PrivateAttr(default_factory=dict)

    @classmethod
    @abstractmethod
    def _map_values(cls, values: dict[str, Any], fn: Mapper) -> dict[str, Any]:
        """``values`` (the value fields) with ``fn`` applied to every part that holds a value
        (each checkpoint kind knows where its values sit)."""

    def _nested(self) -> Iterator[tuple[str, str, Concealed]]:
        """The checkpoints inside this one, as ``(field, key, checkpoint)``."""
        return iter(())

    def _shown_labels(self, policy: Redaction) -> dict[str, Any]:
        """The fields holding the runner's own labels, masked by ``policy`` (see :func:`shown_label`)."""
        return {}

    # -- what the user sees ---------------------------------------------------------------
    @property
    def masked(self) -> bool:
        """``True`` when the saved form holds placeholders (a stored copy resumes only once told how)."""
        return bool(self._placeholders())

    @property
    def masks(self) -> list[str]:
        """The distinct placeholders the saved form holds (``["[redacted:password]", ...]``): what ``unmask`` takes."""
        return sorted(self._placeholders())

    def unmask(self, values: Mapping[str, Any]) -> Self:
        """A copy that resumes with ``values`` (``{"[redacted:password]": "...", ...}``) in place of their masks.

        Its saved form stays masked. A placeholder left without a value still stops a resume;
        add ``.accept_masked()`` to go on with those as they are.
        """
        if not isinstance(values, Mapping) or not values:
            raise UnmaskArgumentError(describe_shape(values), "must be a non-empty dict of placeholder -> value")
        present = self._placeholders()
        for key, value in values.items():
            if not isinstance(key, str) or PLACEHOLDER.fullmatch(key) is None:
                raise UnmaskArgumentError("a key that is not a placeholder",
                                          "keys must be placeholders as the checkpoint shows them, '[redacted:<name>]'")
            if key not in present:
                raise UnmaskArgumentError("a placeholder this checkpoint does not hold",
                                          "keys must be placeholders this checkpoint holds (see its saved form)")
            if value is None or not isinstance(value, str | int | float):
                raise UnmaskArgumentError(describe_shape(value), "values must be strings or numbers")
            if isinstance(value, str) and not is_sound(value):
                raise UnmaskArgumentError("a string holding a lone surrogate",
                                          "values must be text that can be saved as UTF-8")
        copy = self._rewritten(put_back(dict(values)), trust=False)
        copy._learned = {**self._learned, **{str(value): mask for mask, value in values.items()}}
        return copy

    def accept_masked(self) -> Self:
        """A copy that resumes with whatever placeholders it still holds: the model will read them as they are."""
        return self._rewritten(lambda item: item, trust=True)

    def __getstate__(self) -> dict[Any, Any]:
        """A pickle is a saved form too: it carries the masked fields, never the private values."""
        state = dict(super().__getstate__())
        state["__pydantic_private__"] = {"_real": None, "_shown": None, "_trusted": False, "_learned": {}}
        return state

    # -- what the doors read --------------------------------------------------------------
    def learned(self) -> dict[str, str]:
        """What the run (and the caller, through ``unmask``) said to mask, this checkpoint's and its nested ones'."""
        found = dict(self._learned)
        for _, _, inner in self._nested():
            found.update(inner.learned())
        return found

    def door_values(self) -> tuple[dict[str, Any], bool]:
        """The value fields a door continues with, and whether it may go on with them as they are.

        The private values while the fields are as written; else the fields themselves, which
        a door checks for placeholders.
        """
        if self._real is not None and self.model_dump_json(exclude=_OWN_SEAL) == self._shown:
            return json.loads(self._real), self._trusted
        shown = self.model_dump(mode="json", include=set(self._VALUE_FIELDS))
        return shown, False

    @classmethod
    def refuse_placeholders(cls, values: dict[str, Any], names: set[str], door: str) -> None:
        """Refuse to go on from value fields that still hold masks of the policy ``names`` (keys and patterns)."""
        found = {mask for mask in placeholders(cls._valued(values)) if mask[len("[redacted:"):-1] in names}
        if found:
            raise MaskedCheckpointError(door, len(found))

    @classmethod
    def _valued(cls, values: dict[str, Any]) -> Any:
        """The value fields as the values the model reads (what a mask there stands for): a kind whose value
        fields are keyed by the runner's own labels (masked, but no value) leaves those keys out."""
        return values

    def _placeholders(self) -> set[str]:
        found = placeholders(self._valued(self.model_dump(mode="json", include=set(self._VALUE_FIELDS))))
        for _, _, inner in self._nested():
            found |= inner._placeholders()
        return found

    def _rewritten(self, fn: Mapper, *, trust: bool) -> Self:
        copy = self.model_copy(deep=False)
        for field, key, inner in list(self._nested()):
            holder = dict(getattr(copy, field))
            holder[key] = inner._rewritten(fn, trust=trust)
            setattr(copy, field, holder)
        values, _ = self.door_values()
        real = self._map_values(values, fn)
        copy._real = json.dumps(real, ensure_ascii=False)
        copy._shown = copy.model_dump_json(exclude=_OWN_SEAL)
        copy._trusted = trust or not placeholders(self._valued(real))
        return copy

    def concealed_by(self, scrubber: Any) -> Self:
        """This checkpoint as a run under ``scrubber`` shows it: masked, the real values kept private.

        Nested checkpoints are swept again with what the run learned since they were written.
        """
        copy = self.model_copy(deep=False)
        for field, key, inner in list(self._nested()):
            holder = dict(getattr(copy, field))
            holder[key] = inner.concealed_by(scrubber)
            setattr(copy, field, holder)
        real, trusted = self.door_values()
        shown = self._map_values(self._map_values(real, scrubber.quietly), scrubber.sweep)
        for name in self._VALUE_FIELDS:
            setattr(copy, name, shown[name])
        policy = getattr(scrubber, "policy", None)
        if isinstance(policy, Redaction):
            for name, label in self._shown_labels(policy).items():
                setattr(copy, name, label)
        copy._real = json.dumps(real, ensure_ascii=False)
        copy._trusted = trusted or self._real is None  # a run's own values, or what its caller accepted
        copy._learned = {**self._learned, **scrubber.known()}
        copy._shown = copy.model_dump_json(exclude=_OWN_SEAL)
        return copy
