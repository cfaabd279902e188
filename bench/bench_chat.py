"""Chat benchmark: what a long chat costs, per turn, as it grows (issue 46).

Scenario: a chat of ``n`` short turns (a scripted model that answers at once, a system prompt,
no tools), sent with ``send_sync``. Measured: the wall time of the sends (per turn), what stays
allocated once they are done (tracemalloc, after a collection), what ``frame()`` adds to it and
how long it takes (median of repeats, the first call included in the memory), and the size of
the chat's HTML view. A turn carries the conversation so far, so its recording lands every earlier
message as a piece; the goal is a chat whose ``frame()`` and view cost one row per turn, and
whose turns share the conversation's messages instead of each holding a copy.

Goals (1,000 turns): ``frame()`` under 1 s (it took 9.5-13 s), kept memory under 400 MB with
``frame()`` read (it was about 1.1 GB), the view under 1 MB (it grew without bound, 8.8 MB at
200 turns). Kept memory per turn at 250, 500 and 1,000 turns: a chat whose cost is linear in its
turns keeps about as much per turn at each size (the goal: at 1,000 turns no more than 1.2 times
what it keeps per turn at 250). A carried message's piece, recorded form and text are made once
for the whole chat, in lists that only grow (``record.captured.History``), and a finished turn's
capture columns, its recording's transcript and the conversation it leaves read them through views
(``record.spliced``): no turn keeps anything per earlier message (it kept about 110 bytes per
carried message per turn before: 134 MB at 1,000 turns, 2.7 times as much per turn as at 250).

Run ``python bench/bench_chat.py`` (``--quick`` only checks it runs).
"""

from __future__ import annotations

import gc
import time
import tracemalloc

from _kit import Report, options, samples_ms

from footprint_lab import Agent, Chat
from footprint_lab.providers import mock


def grown(turns: int) -> tuple[Chat, float]:
    """A chat of ``turns`` short turns, and the ms each send took on average."""
    chat = Chat(Agent(provider=mock(respond=lambda request: "Noted."), system="You are a support desk."))
    started = time.perf_counter_ns()
    for number in range(turns):
        chat.send_sync(f"Message {number}: my order is A-{number}.")
    return chat, (time.perf_counter_ns() - started) / 1e6 / turns


def kept_mb(turns: int) -> tuple[float, float]:
    """MB kept after ``turns`` sends, and after ``frame()`` was read too."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    chat, _ = grown(turns)
    gc.collect()
    sent = tracemalloc.get_traced_memory()[0] - before
    chat.frame()
    gc.collect()
    framed = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return sent / 1e6, framed / 1e6


def main() -> None:
    args = options(__doc__ or "")
    report = Report("chat", args)
    grown(3)[0].frame()  # imports and one-off caches are no chat's
    per_turn: dict[int, float] = {}
    for turns in (25, 50) if args.quick else (100, 250, 500, 1000):
        size = f"{turns} turns"
        big = turns >= 1000
        chat, sent_ms = grown(turns)
        report.add("send, per turn (the whole chat over its turns)", [sent_ms], size=size, goal="(reference)")
        frame = samples_ms(chat.frame, 1 if args.quick else 3)
        report.add("frame()", frame, size=size, goal="<= 1,000 ms" if big else "(reference)",
                   met=max(frame) <= 1000 if big else None)
        html = len(chat._repr_mimebundle_()["text/html"]) / 1e3
        report.add("the chat's HTML view", [html], size=size, unit="kB", goal="<= 1,000 kB", met=html <= 1000)
        pieces = sum(len(run.recording.context_pieces) for run in chat.turns)
        del chat
        sent, framed = kept_mb(turns)
        report.add("kept after the sends", [sent], size=size, unit="MB", goal="(reference)",
                   note=f"{pieces:,} context pieces in the turns' recordings")
        report.add("kept with frame() read", [framed], size=size, unit="MB",
                   goal="<= 400 MB" if big else "(reference)", met=framed <= 400 if big else None)
        per_turn[turns] = framed * 1e3 / turns
        report.add("kept per turn, frame() read", [per_turn[turns]], size=size, unit="kB", goal="(reference)")
    first, last = 250 if 250 in per_turn else min(per_turn), max(per_turn)
    growth = per_turn[last] / per_turn[first]
    report.add(f"kept per turn at {last:,} turns over that at {first:,}", [growth], size=f"{first}-{last} turns",
               unit="x", goal="<= 1.2 (linear in the turns)", met=growth <= 1.2)
    report.close()


if __name__ == "__main__":
    main()
