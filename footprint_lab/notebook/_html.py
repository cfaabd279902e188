"""``to_html(path, out)``: one self-contained HTML page from a notebook, readable with no network at all.

Rule kept here: the page makes no request outside itself, and says everything with scripts
off. A Content-Security-Policy forbids every fetch (images only as ``data:`` URIs) and lets
only the page's own scripts run (a per-page nonce); plotly.js, when a figure needs it, is
embedded once from the installed plotly package, never from a CDN.

What is drawn, and from what:
- a run's output is drawn from its recording (validated and checked like ``load_runs`` does),
  never from the HTML the file stored beside it: a tampered notebook cannot inject markup; an
  output that shows a seal nothing in it backs (its recording removed, or no longer displayed)
  is not drawn, its place saying why (``notebook.seal_claims.unbacked``), so no forged "sealed · verified" stands;
- a plotly figure is drawn by plotly.js from its JSON, with its static copy (the output's
  HTML or text) in a ``<noscript>`` block for readers with scripts off;
- any other HTML or markdown from the file is sanitized (an allow-list of tags, attributes and
  CSS properties, no ``<style>`` or ``<script>`` blocks, links only to http, https and mailto);
  text is escaped; images are inlined.

Every value from the file (a cell's source, a stream, a title, an image) is written through
the engine's one door for values (:mod:`footprint_lab.markup.elements`: escaped, quotes
included, at most a bounded amount of each, invisible controls shown as marks).

Role: lab layer (``footprint_lab.notebook``); needs the notebook extra (nbconvert's bleach and mistune).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import secrets
from pathlib import Path
from typing import Any

from footprint_lab.base.unicode import visible
from footprint_lab.lab.views import answer_view
from footprint_lab.markup import theme
from footprint_lab.markup.elements import Html, attr, el, esc, join, raw, start
from footprint_lab.notebook.read import as_path, check_recording, output_path, read_notebook, write_text
from footprint_lab.notebook.seal_claims import unbacked
from footprint_lab.record.recording import RECORDING_MIME, Recording

PLOTLY_MIME = "application/vnd.plotly.v1+json"
#: where all of a value the page draws only the beginning of is
_WHOLE = "the notebook file"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: JSON written inside a <script> element: the characters HTML reads there, as the JSON escapes that stand for them
_JSON_IN_SCRIPT = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})
_INERT_BLOCKS = re.compile(r"<(script|style|template|iframe|object)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
#: a tree's picture (``lab.views.svg``): its elements, and the attributes they keep (geometry and presentation;
#: none can name a URL or run a script)
_SVG_TAGS = frozenset({"svg", "g", "rect", "path", "text", "title"})
_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "del", "details", "div", "dl", "dt", "em",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "kbd", "li", "mark", "ol", "p", "pre", "q", "s",
    "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr",
    "u", "ul",
}) | _SVG_TAGS
_SVG_ATTRIBUTES = frozenset({
    "xmlns", "viewBox", "width", "height", "x", "y", "rx", "d", "fill", "stroke", "stroke-width", "font-size",
    "font-weight", "font-family", "text-anchor", "paint-order", "role", "aria-label",
})
_PAGE_STYLE = f"""{theme.dark_rules(follow_system=True)}
body{{font-family:{theme.FONT};font-size:14px;line-height:{theme.LEADING};margin:2rem auto;max-width:{theme.WIDTH};
color:{theme.INK};background:{theme.PAPER}}}
a{{color:{theme.BLUE}}}
.fl-cell{{margin:1rem 0}}.fl-source{{background:{theme.FILL};border:1px solid {theme.LINE};border-radius:4px;
padding:.5rem;white-space:pre-wrap;font-size:{theme.SMALL};color:{theme.GREY}}}
.fl-output{{margin:{theme.SPACE[1]} 0 {theme.SPACE[1]} 1rem;overflow-x:auto}}
.fl-output pre{{white-space:pre-wrap;margin:0}}.fl-output table{{border-collapse:collapse}}
.fl-output td,.fl-output th{{border:1px solid {theme.LINE};padding:2px 6px;text-align:left;vertical-align:top}}
.fl-svg{{display:block;max-width:100%;height:auto}}
blockquote{{border-left:4px solid {theme.AMBER};margin:.5rem 0;padding:.2rem .8rem;background:{theme.AMBER_TINT}}}
.fl-skipped{{color:{theme.RED}}}
"""


def to_html(path: str | os.PathLike[str], out: str | os.PathLike[str]) -> Path:
    """Write the notebook at ``path`` as one offline HTML page at ``out``; returns ``out``.

    ``out`` is checked first (its folder must exist), and the page is written once, whole.
    A recording this library cannot read (a newer schema version, or one that fails its checks)
    is not drawn: its place says which field, as ``load_runs`` warns.
    """
    target = output_path(out, "out", reading=as_path(path))  # never a page written over its own notebook
    notebook = read_notebook(path)
    nonce = secrets.token_urlsafe(16)
    page = _Page(nonce)
    for index, cell in enumerate(notebook["cells"]):
        if isinstance(cell, dict):
            page.cell(index, cell)
    title = page.title or as_path(path).stem
    scripts = Html()
    if page.plots:
        import plotly.offline

        bundle = plotly.offline.get_plotlyjs().replace("</script", "<\\/script")
        scripts = join([el("script", raw(bundle), nonce=nonce), el("script", raw(_DRAW), nonce=nonce)])
    policy = (f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; "
              f"script-src 'nonce-{nonce}'")
    head = el("head", start("meta", charset="utf-8"),
              start("meta", http_equiv="Content-Security-Policy", content=raw(policy)),  # no quote in it
              el("title", raw(esc(title, badges=False))), el("style", raw(_PAGE_STYLE)))
    page_html = el("html", head, el("body", *page.parts, scripts), lang="en")
    write_text(f"<!DOCTYPE html>\n{page_html}\n", target, "out")
    return target


# Draws every figure from its JSON; each figure's static copy sits in <noscript> beside it. plotly.js
# colours its SVG through style attributes, which a reader that strips every style (a strict
# sanitizer, a reader mode) removes, leaving each shape filled black: so each drawing's colours,
# lines and fonts are also written as SVG presentation attributes, which such a reader keeps.
_DRAW = """
var PRESENTED = ['fill', 'fill-opacity', 'stroke', 'stroke-width', 'stroke-opacity', 'stroke-dasharray', 'opacity',
                 'font-family', 'font-size', 'font-weight', 'display', 'visibility'];
function presented(root) {
  root.querySelectorAll('svg, svg *').forEach(function (node) {
    PRESENTED.forEach(function (name) {
      var value = node.style && node.style.getPropertyValue(name);
      if (value) { node.setAttribute(name, value); }
    });
  });
}
function undrawn(target) {
  target.textContent = '(this figure could not be drawn: the notebook file holds its data)';
}
document.querySelectorAll('script[type="application/json"].fl-figure').forEach(function (data) {
  var target = document.getElementById(data.dataset.target);
  try {  // one figure plotly cannot draw leaves the others drawn
    var figure = JSON.parse(data.textContent);
    Plotly.newPlot(target, figure.data || [], figure.layout || {}, {displaylogo: false, responsive: true})
      .then(function () {
        presented(target);
        target.on('plotly_afterplot', function () { presented(target); });
      }, function () { undrawn(target); });
  } catch (error) {
    undrawn(target);
  }
});
"""


class _Page:
    def __init__(self, nonce: str) -> None:
        self.nonce = nonce
        self.parts: list[Html] = []
        self.plots = 0
        self.title: str | None = None

    def cell(self, index: int, cell: dict[str, Any]) -> None:
        source = _text(cell.get("source", ""))
        kind = cell.get("cell_type")
        if kind == "markdown":
            if self.title is None:
                heading = re.search(r"^#\s+(.+)$", source, re.MULTILINE)
                self.title = heading.group(1).strip() if heading else None
            self.parts.append(el("div", _markdown(source), class_="fl-cell fl-markdown"))
            return
        if kind != "code":
            return
        shown = [el("pre", _whole(source), class_="fl-source")] if source.strip() else []
        shown += [el("div", self.output(index, number, output), class_="fl-output")
                  for number, output in enumerate(cell.get("outputs") or []) if isinstance(output, dict)]
        self.parts.append(el("div", *shown, class_="fl-cell", id=f"cell-{index}"))

    def output(self, cell: int, number: int, output: dict[str, Any]) -> Html:
        forged = unbacked(output)  # a seal shown that nothing backs is never drawn as if it held
        if forged is not None:
            return el("p", f"cell {cell}, output {number}: not shown: {forged}", class_="fl-skipped")
        kind = output.get("output_type")
        if kind == "stream":
            return el("pre", _whole(_ANSI.sub("", _text(output.get("text", "")))))
        if kind == "error":
            trace = "\n".join(_text(line) for line in output.get("traceback") or [])
            return el("pre", _whole(_ANSI.sub("", trace)), class_="fl-error")
        data = output.get("data")
        if not isinstance(data, dict):
            return Html()
        if RECORDING_MIME in data:
            return _recording(cell, number, data[RECORDING_MIME])
        if PLOTLY_MIME in data and isinstance(data[PLOTLY_MIME], dict):
            return self.figure(data)
        return _static(data)

    def figure(self, data: dict[str, Any]) -> Html:
        self.plots += 1
        target = f"fl-figure-{self.plots}"
        # no "<", ">" or "&" in the data block: neither "</script" nor "<!--" can end or hide it
        figure = json.dumps(data[PLOTLY_MIME], ensure_ascii=True).translate(_JSON_IN_SCRIPT)
        fallback = _static({k: v for k, v in data.items() if k != PLOTLY_MIME}) or el("p", "(a figure)")
        return join([el("div", id=target, class_="fl-plot"),
                     el("script", raw(figure), type="application/json", class_="fl-figure", data_target=target),
                     el("noscript", fallback)])


def _recording(cell: int, number: int, value: Any) -> Html:
    checked = check_recording(value, "to_html")
    if not isinstance(checked, Recording):
        return el("p", f"cell {cell}, output {number}: recording not shown, field ", el("code", checked.field),
                  f" {checked.problem}", class_="fl-skipped")
    return raw(answer_view(checked))


def _whole(text: str) -> Html:
    """A long text drawn in a page: its beginning, under a note that the notebook file holds all of it."""
    return raw(esc(text, whole=_WHOLE))


def _static(data: dict[str, Any]) -> Html:
    """The richest output kind a page can show without running anything from the file."""
    if isinstance(data.get("text/html"), str | list):
        return raw(sanitize(_text(data["text/html"])))
    for mime in ("image/png", "image/jpeg", "image/svg+xml"):
        if mime in data:
            image = _image(mime, data[mime])
            if image:
                return image
    if isinstance(data.get("text/markdown"), str | list):
        return _markdown(_text(data["text/markdown"]))
    if "text/plain" in data:
        return el("pre", _whole(_ANSI.sub("", _text(data["text/plain"]))))
    return Html()


def _image(mime: str, value: Any) -> Html:
    data = _text(value)
    if mime == "image/svg+xml":
        data = base64.b64encode(data.encode("utf-8")).decode("ascii")
    else:
        data = "".join(data.split())
        try:
            base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            return Html()
    return start("img", alt="", src=raw(attr(f"data:{mime};base64,{data}", limit=None)))  # whole, never cut


def _markdown(source: str) -> Html:
    import mistune

    return raw(sanitize(str(mistune.html(source))))


def sanitize(html: str) -> str:
    """HTML from a file made inert: allowed tags and attributes only, links to http(s) and mailto only, and every
    direction control or control character in it drawn as its mark (a reversed line cannot pass for another)."""
    import bleach

    html = _INERT_BLOCKS.sub("", html)  # bleach would keep a script's text as text; drop it whole
    from bleach.css_sanitizer import ALLOWED_CSS_PROPERTIES, ALLOWED_SVG_PROPERTIES, CSSSanitizer

    properties = ALLOWED_CSS_PROPERTIES | _BOX_PROPERTIES
    # a tree's picture colours its shapes in their style (fill, stroke: a palette variable, never a URL)
    sanitizer = CSSSanitizer(allowed_css_properties=properties, allowed_svg_properties=ALLOWED_SVG_PROPERTIES)
    cleaned = str(bleach.clean(html, tags=_TAGS, attributes=_allowed, protocols={"http", "https", "mailto", "data"},
                               strip=True, strip_comments=True, css_sanitizer=sanitizer))
    return visible(cleaned)  # a direction control or control character drawn as its mark, as in every value


#: Besides bleach's own list, the properties that draw a box (an error card's coloured edge, a badge's
#: round corners): lengths and colours only, none of them can name a URL.
_BOX_PROPERTIES = frozenset({
    "border", "border-top", "border-right", "border-bottom", "border-left", "border-width", "border-style",
    "border-left-width", "border-left-style", "border-radius", "padding", "padding-top", "padding-right",
    "padding-bottom", "padding-left", "margin", "margin-top", "margin-right", "margin-bottom", "margin-left",
    "max-width", "min-width",
})


def _allowed(tag: str, name: str, value: str) -> bool:
    """Attributes kept: a few harmless ones (inline styles through a CSS allow-list), links to
    http(s)/mailto, images only as inline data."""
    if name in ("class", "title", "colspan", "rowspan", "align", "alt", "open", "style"):
        return True
    if tag in _SVG_TAGS:
        return name in _SVG_ATTRIBUTES
    if tag == "a" and name == "href":
        return value.startswith(("http://", "https://", "mailto:", "#"))
    return tag == "img" and name == "src" and value.startswith("data:image/")


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""
