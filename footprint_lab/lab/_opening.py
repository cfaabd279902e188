"""What the Lab opens on a click in its views: the answering call, a call's slots, a piece, a member.

Rule kept here: a panel draws from the run's recording as explained once (``explained``), the
same figures the answer view was drawn from, and the selection names what is open (with the
chat's turn, when the run shown is one), so the browser draws it from the state alone.

Role: lab layer; mixed into :class:`footprint_lab.lab.widget.Lab`, whose traits it sets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from footprint_lab.core.chat import Chat
from footprint_lab.core.run import explained
from footprint_lab.lab import panels
from footprint_lab.markup.elements import el, join, raw


class Opening:
    """The Lab's panels, opened on a click: ``open_answer``, ``open_call``, ``open_piece``, ``open_member``."""

    chat: Chat | None
    run: Any
    replay: Any
    selection: dict[str, Any]
    panel_html: str
    member_path: str
    member_html: str
    _call: str | None
    _piece: tuple[str, str] | None

    if TYPE_CHECKING:
        def _rerun_target(self, call: str | None) -> tuple[Any, Any] | None: ...

    def open_answer(self) -> None:
        """The call that produced the answer as the model saw it: its messages (each naming its piece) and the
        raw request and reply; its pieces stay listed once, in the answer view."""
        if self.run is None:
            return
        call = panels.answering_call(self.run.recording)
        if call is None:
            return
        self._call = call
        self._piece = None
        self.selection = {**self._turn_selected(), "panel": "answer", "call": call}
        self.panel_html = panels.bounded(panels.answer_panel(self.run.recording, call), f"The call {call}")

    def open_call(self, call: str) -> None:
        """One LLM call's slots, one clickable row per piece."""
        if self.run is None:
            return
        self._call = call
        self._piece = None
        self.selection = {**self._turn_selected(), "panel": "call", "call": call}
        self.panel_html = panels.bounded(panels.call_panel(self.run.recording, call), f"The call {call}")

    def open_piece(self, piece: str, slot: str, *, call: Any = None, with_call: bool = True) -> None:
        """One piece of a call: its chain of custody, suspect score, and the reruns that test it.

        ``with_call`` shows the piece's own row above it, open to its custody (a button lists the call's other
        pieces); a piece clicked in the answer view opens there already, so the panel then holds only its score
        and reruns.
        """
        if self.run is None:
            return
        call = str(call) if call else self._call or panels.answering_call(self.run.recording)
        if call is None:
            return
        recording = self.run.recording
        self._call = call
        self._piece = (slot, piece)
        self.selection = {**self._turn_selected(), "panel": "piece", "call": call, "piece": piece, "slot": slot}
        kept = explained(recording)  # what the answer view and the panels drew from: computed once per recording
        found = kept.backtrack(call)
        candidate = next((c for c in found if c.source_id == piece and c.read_by == call and (not slot or
                                                                                              c.slot == slot)), None)
        ranked = kept.suspects(call)
        above = panels.piece_only_panel(recording, call, self._piece) if with_call else ""
        self.panel_html = panels.bounded(
            above + panels.piece_panel(candidate, piece, call, ranked, can_rerun=self._rerun_target(call) is not None,
                                       can_replay=self.replay is not None),
            f"The call {call}")

    def open_member(self, path: str) -> None:
        """A member of the composition: its answer view, below the tree."""
        if self.run is None:
            return
        member = panels.find_recording(self.run.recording, path=path)
        self.member_path = path
        self.selection = {**self.selection, "member": path}
        if member is None:
            self.member_html = ""
            return
        label = member.runner.name or member.runner.id or ""
        self.member_html = join([el("div", "member ", el("code", path), f" · {member.runner.kind} {label}",
                                    class_="fl-section-title"), raw(panels.answer_html(member))])

    def _turn_selected(self) -> dict[str, Any]:
        """The turn open in the views, as the selection names it (nothing outside a chat)."""
        if self.chat is None:
            return {}
        number = next((k for k, turn in enumerate(self.chat) if turn is self.run), None)
        return {} if number is None else {"turn": number}

