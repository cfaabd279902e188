"""Declarations: every piece of context an agent may be given is declared, named and placed.

Rule kept here: an injection is a declared thing with a unique ``id``, a slot, a trigger and a
cache hint, checked the moment it is declared (refused by name, with the fix, before any run),
and remembered with where it was declared (the caller's file and line), so the recording can
say where every piece of context was born: the file relative to the working directory (a
notebook's folder) or by its name alone, never by an absolute path that would carry a home
folder into every notebook the recording is shared in.

One primitive, injection = slot x trigger x cache, in six kinds:

==============  ==========================================  ======================  ==============
kind            what lands                                  trigger                 cache default
==============  ==========================================  ======================  ==============
fact            ``data`` as text (JSON unless a string)      always / rule / tool    while_active
steering        ``prompt``                                   always                  always
instruction     ``prompt``, or ``template`` with facts       always / rule / tool    while_active
skill           ``body`` (and its ``tools``)                 llm_activated           while_active
memory          one piece per recalled item                  always / rule / tool    never
rag             one piece per retrieved chunk                always / rule / tool    never
==============  ==========================================  ======================  ==============

Facts, steering, instructions, skills, memory and RAG land in the system slot, in the order
they were declared, after the agent's own system prompt; a fact may instead land in the
messages slot (after the conversation) as a message with ``role='user'`` or
``role='assistant'``. ``role='tool'`` is refused: a tool message answers a call the model made,
and no call asked for a fact. The cache hint (``always`` / ``never`` / ``while_active``) is
recorded on every piece for providers that cache prompts.

Role: context layer. Refusals raised here: :class:`ContextDeclarationError`,
:class:`FactRoleError`.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from footprint_lab.base.refusal import Refusal, call_problem, describe_shape
from footprint_lab.base.unicode import is_sound
from footprint_lab.context._retrieval import BM25Scorer, Chunk, Corpus, RetrievalIndex, Scorer, chunk_corpus
from footprint_lab.context._triggers import LLMActivated, Trigger, always, llm_activated, rule
from footprint_lab.context.refusals import ContextDeclarationError
from footprint_lab.context.source_ids import RESERVED_IDS
from footprint_lab.record.captured import Cache, Slot

if TYPE_CHECKING:
    from footprint_lab.context._stores import MemoryStore

#: What a declaration id may be: short, safe to show in any message or view, and none of ``RESERVED_IDS``.
ID_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
#: A template's reference to a fact: ``{fact:fact-id}``.
FACT_REF = re.compile(r"\{fact:([A-Za-z0-9_.-]{1,64})\}")
CACHE_HINTS = ("always", "never", "while_active")
MESSAGE_ROLES = ("user", "assistant")


class FactRoleError(Refusal, ValueError):
    """Raised when a fact for the messages slot has no usable ``role``.

    A fact in the messages slot lands as a message, so it needs ``role='user'`` or
    ``role='assistant'``; ``'tool'`` is refused because a tool message must answer a tool call
    the model made. Carries ``fact_id`` and ``received`` (the role's shape, or the refused
    role name when it is one of the message roles).
    """

    code = "ERR_FACT_ROLE"
    fields = ("fact_id", "received")

    def __init__(self, fact_id: str, received: str) -> None:
        if received == "'tool'":
            why = ("a tool message must answer a tool call the model made, and no call asked for this fact, "
                   "so providers would reject the request")
        elif received == "'system'":
            why = "system text belongs in the system slot: drop slot='messages' (the default slot is 'system')"
        else:
            why = "a fact in the messages slot lands as a message, and a message needs a role"
        super().__init__(
            f"define_fact '{fact_id}': slot='messages' needs role='user' or role='assistant'; {why} "
            f"(received {received})."
        )
        self.fact_id = fact_id
        self.received = received


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Injection:
    """One declared piece of context. Build it with a ``define_*`` function."""

    id: str
    kind: str
    slot: Slot
    trigger: Trigger
    cache: Cache
    #: the text that lands, when it does not depend on the turn (empty for memory and RAG)
    text: str
    declared_at: str | None
    role: str | None = None
    #: a fact's data as declared, when it was not a string: a redaction policy reads its keys
    #: before the data is turned into text (a key rule cannot find a key in JSON text)
    data: Any = None


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Instruction(Injection):
    """An instruction; a ``template`` is rendered with its facts when the agent is built."""

    template: str | None = None
    fact_refs: tuple[str, ...] = ()

    def render(self, facts: Mapping[str, str]) -> str:
        if self.template is None:
            return self.text
        return FACT_REF.sub(lambda match: facts[match.group(1)], self.template)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Skill(Injection):
    """A skill: ``description`` is offered through ``read_skill``; ``text`` is its body."""

    description: str
    tools: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Memory(Injection):
    """Recall from a store, under the run's memory namespace; write the turn back after the answer."""

    store: Any
    limit: int = 10
    write_back: bool = True


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Rag(Injection):
    """Retrieval over chunks of a corpus, scored against the user's message."""

    chunks: tuple[Chunk, ...]
    index: RetrievalIndex
    scorer: str
    top_k: int = 3
    threshold: float = 0.0


# -- checks shared by every declaration ---------------------------------------------------
def _call_site() -> str | None:
    """``file:line`` of the first caller outside this package (where the declaration was written).

    In a notebook the "file" is a kernel's temporary cell file; it is named the way IPython
    names it in tracebacks (``In[4]:12``), which is what the analyst can find on the page.
    Any other file is named as :func:`declared_in` says, never by its absolute path.
    """
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("footprint_lab.context"):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return None
    filename = frame.f_code.co_filename
    return f"{_cell_name(filename) or declared_in(filename)}:{frame.f_lineno}"


def _cell_name(filename: str) -> str | None:
    shell_module = sys.modules.get("IPython")
    if shell_module is None:
        return None
    shell = shell_module.get_ipython()
    label = getattr(getattr(shell, "compile", None), "format_code_name", lambda _name: None)(filename)
    return label[1] if label else None


def declared_in(filename: str, folder: str | None = None) -> str:
    """A declaring file as the recording names it: relative to ``folder`` (the working directory, which
    in a kernel is the notebook's folder) when it is under it, otherwise its name alone.

    The record travels with every notebook and bundle it is shown in, so it never holds an absolute
    path (a home folder, a user name, a checkout's location). A name Python gives code that has no
    file (``<stdin>``, ``<string>``) is kept as it is.
    """
    if filename.startswith("<") and filename.endswith(">"):
        return filename
    base = Path(folder if folder is not None else os.getcwd())
    path = Path(filename) if Path(filename).is_absolute() else base / filename
    for resolve in (os.path.abspath, os.path.realpath):
        try:
            return Path(resolve(path)).relative_to(resolve(base)).as_posix()
        except ValueError:
            continue
    return path.name


def _check_id(declaration: str, value: Any) -> str:
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        shape = "a string that is not" if isinstance(value, str) else describe_shape(value)
        raise ContextDeclarationError(
            declaration, "id", value,
            "must be 1 to 64 letters, digits, '_', '.' or '-': it names the piece in every recording and view",
            received=shape,
        )
    if value in RESERVED_IDS:
        raise ContextDeclarationError(
            declaration, "id", value,
            f"must not be an id the runner gives its own pieces ({', '.join(RESERVED_IDS)}): the recording and "
            "every rerun cite a piece by its id, so one id would name two sources; choose another id, e.g. 'vip-note'",
            received=f"the id of {RESERVED_IDS[value]}",
        )
    return value


def _check_text(declaration: str, injection_id: str, setting: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ContextDeclarationError(
            declaration, setting, value, "must be a non-empty string: it is the text the model is given",
            injection_id=injection_id,
            received="a blank string" if isinstance(value, str) else None,
        )
    if not is_sound(value):
        raise ContextDeclarationError(
            declaration, setting, value,
            "must be text that can be saved as UTF-8 (decode bytes with their real encoding, or errors='replace')",
            injection_id=injection_id, received="a string holding a lone surrogate",
        )
    return value


def _check_cache(declaration: str, injection_id: str, value: Any) -> Cache:
    if value not in CACHE_HINTS:
        raise ContextDeclarationError(
            declaration, "cache", value, f"must be one of {', '.join(CACHE_HINTS)}", injection_id=injection_id,
        )
    return cast(Cache, value)


def _check_count(declaration: str, injection_id: str, setting: str, value: Any, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ContextDeclarationError(
            declaration, setting, value, f"must be a whole number from {low} to {high}", injection_id=injection_id,
        )
    return value


def _trigger(declaration: str, injection_id: str, active_when: Any, trigger: Any) -> Trigger:
    """The trigger from ``active_when=`` or ``trigger=`` (at most one), ``always`` by default."""
    if active_when is not None and trigger is not None:
        raise ContextDeclarationError(
            declaration, "trigger", trigger,
            "cannot be given together with active_when: active_when=fn is the same as trigger=rule(fn); keep one",
            injection_id=injection_id,
        )
    if active_when is not None:
        problem = call_problem(active_when, 1)
        if problem is not None:
            raise ContextDeclarationError(
                declaration, "active_when", active_when,
                "must be a function taking the iteration view, e.g. active_when=lambda view: view.iteration > 1",
                injection_id=injection_id, received=problem,
            )
        return rule(active_when)
    if trigger is None:
        return always()
    if not isinstance(trigger, Trigger) or isinstance(trigger, LLMActivated):
        raise ContextDeclarationError(
            declaration, "trigger", trigger,
            "must be always(), rule(fn) or on_tool_return('tool_name') (llm activation is for skills, "
            "which get it by themselves)",
            injection_id=injection_id,
        )
    return trigger


def _fact_text(injection_id: str, data: Any) -> str:
    if isinstance(data, str):
        text = data
    else:
        try:
            text = json.dumps(data, ensure_ascii=False, sort_keys=True)
        except (TypeError, ValueError):
            raise ContextDeclarationError(
                "define_fact", "data", data,
                "must be a string or JSON data (dicts, lists, numbers, strings): it lands as text",
                injection_id=injection_id,
            ) from None
    return _check_text("define_fact", injection_id, "data", text)


# -- the six declarations -----------------------------------------------------------------
def define_fact(
    *,
    id: str,
    data: Any,
    active_when: Callable[[Any], Any] | None = None,
    trigger: Trigger | None = None,
    slot: str = "system",
    role: str | None = None,
    cache: str = "while_active",
) -> Injection:
    """Data the model should know: a string as is, anything else as JSON.

    In the system slot (default) it joins the system prompt; with ``slot='messages'`` it lands
    after the conversation as a message with ``role='user'`` or ``role='assistant'``.
    """
    fact_id = _check_id("define_fact", id)
    if slot not in ("system", "messages"):
        raise ContextDeclarationError(
            "define_fact", "slot", slot, "must be 'system' or 'messages' (a fact is not a tool)", injection_id=fact_id,
            received=f"'{slot}'" if slot == "tools" else None,
        )
    if slot == "messages":
        if role not in MESSAGE_ROLES:
            known = isinstance(role, str) and role in ("tool", "system")
            raise FactRoleError(fact_id, f"'{role}'" if known else describe_shape(role))
    elif role is not None:
        raise ContextDeclarationError(
            "define_fact", "role", role,
            "only applies to slot='messages'; in the system slot a fact is part of the system prompt",
            injection_id=fact_id,
        )
    return Injection(
        id=fact_id, kind="fact", slot=cast(Slot, slot), trigger=_trigger("define_fact", fact_id, active_when, trigger),
        cache=_check_cache("define_fact", fact_id, cache), text=_fact_text(fact_id, data),
        declared_at=_call_site(), role=role, data=None if isinstance(data, str) else data,
    )


def define_steering(*, id: str, prompt: str, cache: str = "always") -> Injection:
    """A rule that is always on: lands in the system slot on every iteration."""
    steering_id = _check_id("define_steering", id)
    return Injection(
        id=steering_id, kind="steering", slot="system", trigger=always(),
        cache=_check_cache("define_steering", steering_id, cache),
        text=_check_text("define_steering", steering_id, "prompt", prompt), declared_at=_call_site(),
    )


def define_instruction(
    *,
    id: str,
    prompt: str | None = None,
    template: str | None = None,
    active_when: Callable[[Any], Any] | None = None,
    trigger: Trigger | None = None,
    cache: str = "while_active",
) -> Instruction:
    """Guidance given when its trigger holds: a ``prompt``, or a ``template`` citing facts as ``{fact:id}``.

    A template's facts are filled in from the same agent's ``define_fact`` declarations when the
    agent is built; a reference to a fact the agent does not declare is refused then.
    """
    instruction_id = _check_id("define_instruction", id)
    if (prompt is None) == (template is None):
        raise ContextDeclarationError(
            "define_instruction", "prompt", None,
            "or 'template' is needed, exactly one of them: prompt='...' for fixed text, "
            "template='... {fact:fact-id} ...' to cite facts",
            injection_id=instruction_id, received="both" if prompt is not None else "neither",
        )
    refs: tuple[str, ...] = ()
    if template is not None:
        _check_text("define_instruction", instruction_id, "template", template)
        refs = tuple(dict.fromkeys(FACT_REF.findall(template)))
        if template.count("{fact:") != len(FACT_REF.findall(template)):
            raise ContextDeclarationError(
                "define_instruction", "template", template,
                "cites a fact in a form that is not {fact:fact-id} (a fact id is 1 to 64 letters, digits, "
                "'_', '.' or '-', closed by '}')",
                injection_id=instruction_id, received="a template with a malformed {fact:...} reference",
            )
    else:
        _check_text("define_instruction", instruction_id, "prompt", prompt)
    return Instruction(
        id=instruction_id, kind="instruction", slot="system",
        trigger=_trigger("define_instruction", instruction_id, active_when, trigger),
        cache=_check_cache("define_instruction", instruction_id, cache), text=prompt or "",
        declared_at=_call_site(), template=template, fact_refs=refs,
    )


def define_skill(
    *, id: str, description: str, body: str, tools: Sequence[Any] = (), cache: str = "while_active"
) -> Skill:
    """Know-how the model loads when it needs it, by calling ``read_skill``.

    Declaring any skill gives the model a ``read_skill`` tool whose description lists every
    skill's ``description``. Once the model reads a skill, its ``body`` is in the system slot and
    its ``tools`` in the tools slot from the next iteration until the turn ends.
    """
    skill_id = _check_id("define_skill", id)
    _check_text("define_skill", skill_id, "description", description)
    if isinstance(tools, str | Mapping) or not isinstance(tools, Sequence):
        raise ContextDeclarationError(
            "define_skill", "tools", tools, "must be a list of tools built with define_tool(...) or @tool",
            injection_id=skill_id,
        )
    for item in tools:
        if not isinstance(getattr(item, "name", None), str) or not callable(getattr(item, "schema", None)):
            raise ContextDeclarationError(
                "define_skill", "tools", item, "must hold only tools built with define_tool(...) or @tool",
                injection_id=skill_id,
            )
    return Skill(
        id=skill_id, kind="skill", slot="system", trigger=llm_activated(),
        cache=_check_cache("define_skill", skill_id, cache), text=_check_text("define_skill", skill_id, "body", body),
        declared_at=_call_site(), description=description, tools=tuple(tools),
    )


def define_memory(
    *,
    id: str,
    store: MemoryStore,
    limit: int = 10,
    write_back: bool = True,
    active_when: Callable[[Any], Any] | None = None,
    trigger: Trigger | None = None,
    cache: str = "never",
) -> Memory:
    """Recall the latest ``limit`` items of the run's memory namespace, one piece per item.

    The namespace is the run's identity (or, without one, its conversation: the run that
    opened it, so follow-ups and resumes share it), so two people, or two tenants, never see
    each other's memory. With ``write_back`` (the default), the user's message and the final
    answer are written to the store after the answer.
    """
    memory_id = _check_id("define_memory", id)
    if not callable(getattr(store, "recall", None)) or not callable(getattr(store, "remember", None)):
        raise ContextDeclarationError(
            "define_memory", "store", store,
            "must be a memory store (recall and remember methods), e.g. InMemoryStore() or SQLiteStore('memory.db')",
            injection_id=memory_id,
        )
    if not isinstance(write_back, bool):
        raise ContextDeclarationError("define_memory", "write_back", write_back, "must be True or False",
                                      injection_id=memory_id)
    return Memory(
        id=memory_id, kind="memory", slot="system",
        trigger=_trigger("define_memory", memory_id, active_when, trigger),
        cache=_check_cache("define_memory", memory_id, cache), text="", declared_at=_call_site(),
        store=store, limit=_check_count("define_memory", memory_id, "limit", limit, 1, 10_000),
        write_back=write_back,
    )


def define_rag(
    *,
    id: str,
    corpus: Corpus,
    top_k: int = 3,
    threshold: float = 0.0,
    scorer: Scorer | None = None,
    chunk_chars: int = 800,
    active_when: Callable[[Any], Any] | None = None,
    trigger: Trigger | None = None,
    cache: str = "never",
) -> Rag:
    """Retrieval over ``corpus``: the ``top_k`` best chunks for the user's message, one piece each.

    ``corpus`` is a list of texts, a mapping of document id to text, or a list of
    ``{"id": ..., "text": ...}``. Documents are cut into chunks of at most ``chunk_chars`` at
    paragraph and word boundaries and indexed now, once. The default scorer is lexical (BM25,
    no network, no model); pass ``scorer=EmbeddingScorer(embed)`` to rank by embeddings. A
    chunk is retrieved when its score is positive and at least ``threshold``; every candidate
    in the top ``top_k`` is recorded with its score, rank and the threshold, admitted or not.
    """
    rag_id = _check_id("define_rag", id)
    top = _check_count("define_rag", rag_id, "top_k", top_k, 1, 1000)
    size = _check_count("define_rag", rag_id, "chunk_chars", chunk_chars, 50, 1_000_000)
    if not isinstance(threshold, int | float) or isinstance(threshold, bool):
        raise ContextDeclarationError("define_rag", "threshold", threshold, "must be a number", injection_id=rag_id)
    chosen = scorer if scorer is not None else BM25Scorer()
    if isinstance(chosen, type | list | tuple | str | bytes) or call_problem(getattr(chosen, "index", None), 1):
        raise ContextDeclarationError(
            "define_rag", "scorer", scorer,
            "must be a scorer with an index(texts) method, e.g. BM25Scorer() or EmbeddingScorer(embed)",
            injection_id=rag_id,
        )
    chunks = chunk_corpus(corpus, size)
    if chunks is None:
        raise ContextDeclarationError(
            "define_rag", "corpus", corpus,
            "must be a non-empty list of texts, a dict of id to text, or a list of {'id': ..., 'text': ...} "
            "with non-blank texts",
            injection_id=rag_id,
        )
    if not all(is_sound(chunk.text) and is_sound(chunk.chunk_id) for chunk in chunks):
        raise ContextDeclarationError(
            "define_rag", "corpus", corpus,
            "must hold text that can be saved as UTF-8 (decode bytes with their real encoding, or errors='replace')",
            injection_id=rag_id, received="a corpus holding a lone surrogate",
        )
    return Rag(
        id=rag_id, kind="rag", slot="system", trigger=_trigger("define_rag", rag_id, active_when, trigger),
        cache=_check_cache("define_rag", rag_id, cache), text="", declared_at=_call_site(),
        chunks=chunks, index=chosen.index([c.text for c in chunks]),
        scorer=str(getattr(chosen, "name", type(chosen).__name__)), top_k=top, threshold=float(threshold),
    )
