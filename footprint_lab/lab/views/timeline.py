"""The timeline view: a run's steps as a waterfall, each bar at its step's start and as long as it took.

Rule kept here: the view draws the rows ``Run.timeline()`` worked out from the recording
(:mod:`footprint_lab.core.timeline`) and nothing else, every value through the one escaping
builder; what a bar's position means is said in the legend, in words. It needs no JavaScript,
and reads with its styles stripped: each row says its step, kind, status, start and duration as
text; a bar's place and width are inline styles, so a notebook that drops the style sheet (an
untrusted one) still draws them. LLM calls, tools, members and other steps are told apart by a
word and a colour; a failed step by its status word, a ``✗`` and a red bar. A member's steps
are indented under the step that ran it (and marked ``↳``). A long run draws its first
:data:`TIMELINE_ROWS` steps and says how many more there are and where they are.

Stable hooks: ``data-fl-step`` (step id) on every row and ``data-fl-call`` on an LLM call's row,
as in the answer view.

Role: lab layer; a pure function of a ``Timeline``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.lab.views.page import Html, css, el, join, new_scope, tag, wrap
from footprint_lab.markup import theme

if TYPE_CHECKING:
    from footprint_lab.core.timeline import Timeline, TimelineRow
    from footprint_lab.record.recording import Recording

#: the most steps the view draws (the frame has them all)
TIMELINE_ROWS = 200
#: each kind of step: the word a row says, and its bar's colour
KINDS = {"llm": ("LLM call", theme.PURPLE), "tool": ("tool call", theme.ORANGE), "member": ("member run", theme.BLUE),
         "step": ("step", theme.GREY)}

TIMELINE_CSS = f"""
§ .fl-tl{{width:100%;table-layout:fixed;border-collapse:collapse}}
§ .fl-tl td,§ .fl-tl th{{border:none;border-bottom:1px solid {theme.LINE};padding:1px 6px;vertical-align:middle}}
§ .fl-tl td:first-child{{overflow-wrap:anywhere}}
§ .fl-tl .fl-num{{text-align:right;white-space:nowrap;font-family:{theme.MONO};font-size:{theme.TINY}}}
§ .fl-tl-track{{background-image:linear-gradient(90deg,{theme.LINE} 1px,transparent 1px);
background-size:25% 100%;background-position:left top}}
§ .fl-tl-axis{{display:flex;justify-content:space-between;font-weight:400;color:{theme.GREY}}}
§ .fl-tl-keys>span{{white-space:nowrap}}
"""


def timeline_html(timeline: Timeline | Recording) -> str:
    """A run's timeline as one self-contained HTML fragment (no JavaScript); takes a ``Timeline`` or a recording."""
    from footprint_lab.core.timeline import Timeline

    found = timeline if isinstance(timeline, Timeline) else Timeline(timeline)
    scope = new_scope()
    return wrap(scope, timeline_body(found), css_class="fl-view fl-timeline", extra=TIMELINE_CSS)


def timeline_body(timeline: Timeline) -> Html:
    """The timeline without its style sheet (for a view that embeds it in its own scope, with ``TIMELINE_CSS``)."""
    rows = timeline.rows
    span = timeline.span_ms
    drawn = rows[:TIMELINE_ROWS]
    head = el("tr", el("th", "step", style=css(width="32%")), el("th", "kind", style=css(width="9%")),
              el("th", "status", style=css(width="10%")), el("th", "start ms", class_="fl-num", style=css(width="8%")),
              el("th", "took ms", class_="fl-num", style=css(width="8%")),
              el("th", el("span", "0 ms"), " … ", el("span", f"{_ms(span)} ms"), class_="fl-tl-axis"))
    table = el("table", head, *(_row(row, span) for row in drawn), class_="fl-tl")
    more = len(rows) - len(drawn)
    rest = el("p", f"… and {more:,} more step{'s' if more != 1 else ''} not drawn: run.timeline().to_frame() "
                   "has every one.", class_="fl-note fl-tl-more") if more > 0 else None
    return join([_header(timeline), _legend(timeline), table, rest])


def _header(timeline: Timeline) -> Html:
    recording = timeline.recording
    rows = timeline.rows
    runner = recording.runner
    counts = {kind: sum(row.kind == kind for row in rows) for kind in KINDS}
    failed = sum(row.failed for row in rows)
    said = (f"{len(rows):,} steps over {_ms(timeline.span_ms)} ms · {counts['llm']} LLM call"
            f"{'s' if counts['llm'] != 1 else ''} · {counts['tool']} tool step{'s' if counts['tool'] != 1 else ''}"
            + (f" · {counts['member']} ran member runs" if counts["member"] else ""))
    return el("div", el("b", "Timeline"), " ", el("b", runner.name or runner.id or runner.kind), " ",
              el("code", recording.run_id, class_="fl-muted"), " ", el("span", said, class_="fl-muted"),
              " ", tag(f"{failed} failed", "failed") if failed else None, class_="fl-head")


def _legend(timeline: Timeline) -> Html:
    members = " A member run's steps follow the step that ran it, indented (↳); they are placed by the member's " \
              "own start (wall clock) less the run's." if timeline.recording.children else ""
    said = ("Each bar starts where its step started, in ms from the run's start (the recorder's clock when "
            "the step began), and is as long as the step took; the scale runs from 0 to the run's end."
            + members)
    keys = [el("span", el("span", "■ ", style=css(color=colour)), word) for word, colour in KINDS.values()]
    keys.append(el("span", el("span", "■ ", style=css(color=theme.RED)), "✗ failed"))
    return join([el("p", said, class_="fl-note"), el("p", join(keys, " · "), class_="fl-note fl-tl-keys")])


def _row(row: TimelineRow, span: float) -> Html:
    word, colour = KINDS.get(row.kind, KINDS["step"])
    left = min(100.0, 100 * row.start_ms / span) if span > 0 else 0.0
    width = min(100.0 - left, 100 * row.duration_ms / span) if span > 0 else 0.0
    bar_colour = theme.RED if row.failed else colour
    title = (f"{row.step} · {word}{' ' + row.label if row.label else ''} · {row.status} · from {_ms(row.start_ms)} ms "
             f"for {_ms(row.duration_ms)} ms")
    bar = el("div", style=css(margin_left=f"{left:.3f}%", width=f"{width:.3f}%", min_width="2px", height=".8rem",
                               border_radius="2px", background_color=bar_colour,
                               outline=f"2px solid {theme.RED}" if row.failed else None),
             class_="fl-tl-bar", title=title)
    nested = "↳ " if row.depth else ""
    label = el("small", f" {row.label}", class_="fl-muted") if row.label else None
    step = el("td", nested, el("code", row.step), label, style=css(padding_left=f"{0.4 + 1.1 * row.depth:.1f}rem"))
    return el("tr", step, el("td", word, style=css(color=colour)), el("td", tag(row.status, row.status)),
              el("td", _ms(row.start_ms), class_="fl-num"), el("td", _ms(row.duration_ms), class_="fl-num"),
              el("td", bar, class_="fl-tl-track"), data_fl_step=row.step,
              data_fl_call=row.step if row.kind == "llm" else None, class_="fl-failed" if row.failed else None)


def _ms(value: float) -> str:
    """A time in ms as the view writes it: three decimals under 10 ms, one under 1 s, whole above."""
    return f"{value:,.3f}" if value < 10 else f"{value:,.1f}" if value < 1000 else f"{value:,.0f}"
