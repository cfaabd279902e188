"""The recording's schema: every path, key and name a recording is written with, declared once.

Rule kept here: runners write a recording, and every explanation, view and exporter reads it. They
meet at these constants, never at a literal repeated in each room.

- **State paths**: where a run writes its tracked state (the ``path`` of a commit entry or a read).
- **Slots**: the three parts of a request a context piece lands in.
- **Source ids and kinds**: what a context piece came from, and the ids a runner gives its own pieces.
- **Meta keys**: what a recording keeps beside its records.
- **Routine events**: the payload keys of the events the recorder writes for itself.
- **Saved-form references** (schema version 2): a transcript message's text is stored once. A commit
  entry that appends message ``k`` holds ``{"message": k}`` in place of its ``"value"``, and a context
  piece that carries its text holds ``"content": {"message": k}``. ``Recording`` writes and reads
  them, so in memory every record holds its value.

Role: record layer; plain constants and two small path builders.
"""

from __future__ import annotations

from typing import Final

#: the schema version this library writes and reads (``load_recording`` is the door)
SCHEMA_VERSION = 2
#: the schema versions it reads
READABLE_VERSIONS = (SCHEMA_VERSION,)
#: the schema versions of footprint_lab 0.1, never released: refused by name at the door, to be recorded again
UNRELEASED_VERSIONS = (1,)
#: the one algorithm a recording is sealed with (``sealing.seal``)
SEAL_ALGORITHM = "sha256-chain/6"
#: the seals of the unreleased 0.1 (earlier chains): refused by name at the door, to be sealed again
UNRELEASED_SEALS = ("sha256-chain/2", "sha256-chain/3", "sha256-chain/4", "sha256-chain/5")
#: the MIME type under which a displayed run carries its recording: JSON-native data that
#: ``Recording.model_validate`` reads back equal (fields at their defaults may be left out, and
#: long lists of flat records may come as tables: ``record.saved_form.packed``)
RECORDING_MIME = "application/vnd.footprint-lab.recording.v1+json"

Path = tuple[str, ...]

# -- state paths: where a run writes its tracked state ------------------------------------------
#: the message a run was given
INPUT_MESSAGE: Path = ("input", "message")
#: the transcript (each turn is appended to it)
MESSAGES: Path = ("messages",)
#: the system text and the tools offered, as assembled for each call
SYSTEM: Path = ("slots", "system")
TOOLS: Path = ("slots", "tools")
#: messages the assembly adds to one request only (facts for the messages slot)
INJECTED_MESSAGES: Path = ("slots", "injected_messages")
#: the text of the latest reply, and the run's answer
LAST_RESPONSE: Path = ("last_response",)
ANSWER: Path = ("answer",)
#: in a composition, the name under which each member's output and failure are written
OUTPUTS = "outputs"
FAILURES = "failures"


def output(name: str) -> Path:
    """Where a member's answer is written in its composition's tracked state."""
    return (OUTPUTS, name)


def failure(name: str) -> Path:
    """Where a member's failure is written in its composition's tracked state."""
    return (FAILURES, name)


# -- slots ---------------------------------------------------------------------------------------
SLOT_SYSTEM: Final = "system"
SLOT_MESSAGES: Final = "messages"
SLOT_TOOLS: Final = "tools"
SLOTS = (SLOT_SYSTEM, SLOT_MESSAGES, SLOT_TOOLS)
#: the state paths each slot's text is written at (custody walks back through them)
SLOT_PATHS: dict[str, tuple[Path, ...]] = {
    SLOT_SYSTEM: (SYSTEM,),
    SLOT_TOOLS: (TOOLS,),
    SLOT_MESSAGES: (MESSAGES, INJECTED_MESSAGES),
}

# -- source ids and kinds of context pieces --------------------------------------------------------
#: the agent's own system prompt, as a source (``agent.without("system-prompt")``)
SYSTEM_PROMPT = "system-prompt"
#: the user's message, as a source
USER_MESSAGE = "user-message"
#: the tool an agent with skills offers to load one (``context.assembly``)
READ_SKILL = "read_skill"
#: the source id of an earlier message a continued conversation carries, before its index (``history#0``)
HISTORY = "history#"
#: the kinds of transcript pieces and of what a runner sends on its own
KIND_BASE = "base"
KIND_USER = "user"
KIND_ASSISTANT = "assistant"
KIND_TOOL_RESULT = "tool_result"
KIND_REGISTRY = "registry"
#: the kinds a conversation's turns are recorded as
TURN_KINDS = (KIND_USER, KIND_ASSISTANT, KIND_TOOL_RESULT)

# -- transcript messages ---------------------------------------------------------------------------
#: a transcript message's own fields (the recording door checks the first three); any other key it holds is data
MESSAGE_FIELDS = ("role", "content", "tool_calls", "tool_call_id", "name", "is_error")
#: the roles a transcript message is written with (a fixed choice: never masked)
ROLES = ("system", "user", "assistant", "tool")
#: a tool call's own fields, in a message or a response: its id, the tool's name, the arguments
CALL_FIELDS = ("id", "name", "args")

# -- meta keys -------------------------------------------------------------------------------------
#: where a member's recording keeps the name its composition mounted it under (``explain.provenance.members``)
MEMBER_KEY = "member"

# -- routine events -------------------------------------------------------------------------------
#: each routine event type and its payload's keys (sorted): the recorder makes the payload from the
#: record the event reports (``record.recorder.Recorder.payloads``)
ROUTINE_PAYLOADS: dict[str, tuple[str, ...]] = {
    "write": ("path", "verb"),
    "read": ("path", "writer"),
    "step_start": ("iteration", "stage"),
    "step_end": ("status",),
    "commit": ("paths",),
}

# -- saved-form references (schema version 2) ------------------------------------------------------
#: the key of a reference to a transcript message, by its index in ``messages``
MESSAGE_REF = "message"
#: the key of a saved recording's list of long texts written once though held in several places:
#: ``{"of": <where the text is written>, "at": [<each other place, written null>, ...]}``, each place a
#: path of keys and indices from the recording's data (``record.saved_form.share_texts``)
COPIES = "copies"
#: how long a text must be (characters) for a saved recording to write it once in place of each copy
COPY_MIN = 1024
