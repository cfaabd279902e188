"""``footprint-lab``: the sharing functions from a shell, a CI job or a pre-commit hook.

    footprint-lab scan  NOTEBOOK...  [policy]    exit 1 when anything still matches
    footprint-lab scrub NOTEBOOK...  [policy] [--out PATH]
    footprint-lab html  NOTEBOOK     -o|--out PAGE.html
    footprint-lab verify FILE...     [--require-seal]   (.ipynb, or a saved .json recording or checkpoint)
    footprint-lab lint-tools CATALOG.json [--threshold X]

The policy is ``Redaction.standard()`` (common secret keys and every built-in pattern) plus
``--key NAME``, ``--pattern NAME=REGEX`` and ``--builtin NAME``; ``--only`` drops the standard
set. What matched is printed by place and name, never by value. ``scan`` also reports widget
state that would break GitHub's renderer. ``verify`` checks the seal of every recording a notebook
(or a ``.json`` file) carries and prints one verdict per recording. ``lint-tools`` prints what
``footprint_lab.lint_tools`` finds in a tool catalog (OpenAI, Anthropic, MCP ``tools/list`` or
plain JSON).

Rule kept here: the exit code says which of three things happened, the same for every
subcommand, so a CI job never takes a refused input for a finding. 0: clean. 1: findings (a
match, a broken seal, a lint error). 2: an input was refused (any ``Refusal``: a missing,
unreadable or malformed file, a bad option, a notebook over the size ``scan`` and ``scrub`` read,
64 MiB, or one that needs more memory than the process has), with one line on stderr naming the
refusal's code (or the lack of memory) and no traceback. 3: footprint-lab itself failed (a bug),
one line on stderr. Given
several files, each is handled on its own and the worst outcome is the exit code (2 over 1:
a file that could not be checked is worse than one with findings).

A command line is read one way only: an argument that starts with ``-`` and is also the name of a
file (``--key=leak.ipynb``) is refused (:class:`CommandLineError`, exit 2) rather than guessed;
after ``--`` every name is a file. A file is read only when it is a regular file (a FIFO or a
device is refused by name, never waited on or read whole), and ``html`` never writes its page
over the notebook it reads.

Role: lab layer; ``[project.scripts]`` points ``footprint-lab`` at :func:`main`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from footprint_lab.base.refusal import Refusal
from footprint_lab.explain.checks.tool_lint import THRESHOLD, lint_findings
from footprint_lab.redact.policy import Redaction

CLEAN, FINDINGS, REFUSED, FAILED = 0, 1, 2, 3


class CommandLineError(Refusal, ValueError):
    """Raised when a command line can be read two ways, before any file is read or written.

    An argument that starts with ``-`` and is also the name of a file (``--key=leak.ipynb``,
    ``--out=clean.ipynb``, ``--help``) could be an option or a file to check; either reading
    leaves a file unchecked or written where nobody asked, so neither is guessed. Carries
    ``reason`` (``option-or-file``) and ``received`` (how many such arguments, never their text).
    """

    code = "ERR_COMMAND_LINE"
    fields = ("reason", "received")

    _FIXES: ClassVar[dict[str, str]] = {
        "option-or-file": "put -- before the files (footprint-lab scan [options] -- FILE...), so every name after "
                          "it is read as a file; in a pre-commit hook, end the hook's args with '--'",
    }

    def __init__(self, reason: str, received: str) -> None:
        super().__init__(f"footprint-lab: the command line holds {received}. {self._FIXES[reason]}.")
        self.reason = reason
        self.received = received

_CODES = """exit codes:
  0  clean: {clean}
  1  findings: {findings}
  2  an input was refused (a missing, unreadable or malformed file, a bad option, a file too large: over
     64 MiB for scan and scrub, 256 MiB for the rest, or more than memory holds): one line on stderr
  3  footprint-lab itself failed (a bug; please report it)
With several files, each is checked and the exit code is the worst outcome (2, then 1, then 0).{note}"""


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; returns the exit code (0 clean, 1 findings, 2 refused, 3 failed)."""
    given = list(sys.argv[1:] if argv is None else argv)
    try:
        _unambiguous(given)
    except Refusal as refusal:
        _refused(refusal)
        return REFUSED
    args = _parser().parse_args(given)
    try:
        return int(args.command(args))
    except Refusal as refusal:
        _refused(refusal)
        return REFUSED
    except MemoryError:  # a file larger than memory allows: nothing was written (scrub writes only at the end)
        print("footprint-lab: the file needs more memory than this process has; nothing was written. Clear large "
              "outputs in Jupyter first, or run where more memory is free", file=sys.stderr)
        return REFUSED
    except OSError as error:  # what a door did not name: a file that went away, a broken pipe
        print(f"footprint-lab: a file could not be read or written ({error.strerror or type(error).__name__})",
              file=sys.stderr)
        return REFUSED
    except Exception as error:  # a bug: not a finding, not a refusal
        print(f"footprint-lab: internal error ({type(error).__name__}); this is a bug in footprint_lab, "
              "please report it with the command that gave it", file=sys.stderr)
        return FAILED


def _unambiguous(given: Sequence[str]) -> None:
    """Refuse a command line where an argument that reads as an option is also a file's name."""
    before = given[:given.index("--")] if "--" in given else given
    both = sum(1 for token in before[1:] if token.startswith("-") and _exists(token))
    if both:
        raise CommandLineError("option-or-file", f"{both} argument(s) that read as an option and name a file too")


def _exists(name: str) -> bool:
    try:
        return os.path.lexists(name)
    except (OSError, ValueError):
        return False


def _refused(refusal: Refusal, path: Path | None = None) -> None:
    where = f"{path}: " if path is not None else ""
    print(f"footprint-lab: {where}{refusal.code}: {' '.join(str(refusal).split())}", file=sys.stderr)


def _each(paths: Sequence[Path], check: Callable[[Path], int]) -> int:
    """Each file checked on its own (a refused one is reported and the others still checked); the worst code."""
    worst = CLEAN
    for path in paths:
        try:
            code = check(path)
        except Refusal as refusal:
            _refused(refusal, path)
            code = REFUSED
        worst = max(worst, code)
    return worst


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="footprint-lab", allow_abbrev=False, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Share notebooks that carry footprint_lab recordings: find and mask secrets, write offline "
                    "HTML, check seals, lint tool catalogs.",
        epilog=_CODES.format(clean="nothing found, or the command did what it was asked",
                             findings="a match (scan), a broken seal (verify), a lint error (lint-tools)", note=""))
    commands = parser.add_subparsers(required=True, metavar="{scan,scrub,html,verify,lint-tools}")

    def command(name: str, summary: str, *, clean: str, findings: str, note: str = "") -> argparse.ArgumentParser:
        return commands.add_parser(name, help=summary, description=summary, allow_abbrev=False,
                                   formatter_class=argparse.RawDescriptionHelpFormatter,
                                   epilog=_CODES.format(clean=clean, findings=findings, note=note and f"\n{note}"))

    scan = command("scan", "list what a redaction policy still finds (exit 1 when anything)",
                   clean="nothing the policy covers, and widget state GitHub can render",
                   findings="a value the policy covers, or widget state that breaks GitHub's renderer")
    scan.add_argument("notebooks", nargs="+", type=Path)
    _policy_options(scan)
    scan.set_defaults(command=_scan, parser=scan)
    scrub = command("scrub", "mask what a redaction policy finds, in place or to --out",
                    clean="every notebook masked (or already clean)", findings="never (scrub masks what it finds)")
    scrub.add_argument("notebooks", nargs="+", type=Path)
    scrub.add_argument("--out", type=Path, help="write the scrubbed copy here (one notebook only)")
    _policy_options(scrub)
    scrub.set_defaults(command=_scrub, parser=scrub)
    html = command("html", "write one self-contained, offline HTML page",
                   clean="the page was written", findings="never")
    html.add_argument("notebook", type=Path)
    html.add_argument("-o", "--out", type=Path, required=True, help="where to write the page")
    html.set_defaults(command=_html, parser=html)
    verify = command("verify", "check the seal of every recording in .ipynb or .json files (exit 1 when one is "
                     "broken)", clean="every seal holds (unsealed recordings pass, unless --require-seal)",
                     findings="a broken seal or a recording changed since it was written (or, with "
                     "--require-seal, an unsealed one)",
                     note="A recording written by a newer footprint_lab (a higher schema version) is not checked: "
                     "it counts as refused (2).")
    verify.add_argument("files", nargs="+", type=Path)
    verify.add_argument("--require-seal", action="store_true", help="also exit 1 when a recording is not sealed")
    verify.set_defaults(command=_verify, parser=verify)
    lint = command("lint-tools", "lint a tool catalog (.json); exit 1 when it has errors",
                   clean="no error (warnings are printed)", findings="at least one error-level finding")
    lint.add_argument("catalog", type=Path)
    lint.add_argument("--threshold", type=float, default=None, help="similarity from which two tools are confusable")
    lint.set_defaults(command=_lint_tools, parser=lint)
    return parser


def _policy_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--key", action="append", default=[], help="mask values under this key (repeatable)")
    parser.add_argument("--pattern", action="append", default=[], metavar="NAME=REGEX",
                        help="mask text matching REGEX, as [redacted:NAME] (repeatable)")
    parser.add_argument("--builtin", action="append", default=[], help="a library pattern by name (repeatable)")
    parser.add_argument("--only", action="store_true", help="leave the standard keys and patterns out")


def _policy(args: argparse.Namespace) -> Redaction:
    patterns = dict(item.split("=", 1) if "=" in item else ("", item) for item in args.pattern)
    extra = Redaction(keys=args.key, patterns=patterns, builtins=args.builtin) if (
        args.key or args.pattern or args.builtin) else None
    if not args.only:
        return Redaction.standard().union(extra)
    if extra is None:
        parser: argparse.ArgumentParser = args.parser
        parser.error("--only needs at least one --key, --pattern or --builtin")  # exits 2
    return extra


def _scan(args: argparse.Namespace) -> int:
    from footprint_lab.notebook import check_widget_state, scan

    policy = _policy(args)

    def check(path: Path) -> int:
        found = [str(finding) for finding in scan(path, redact=policy)]
        found += [f"widget state: {problem.problem}" + (f" ({problem.widget})" if problem.widget else "")
                  for problem in check_widget_state(path)]
        for line in found:
            print(f"{path}: {line}")
        return FINDINGS if found else CLEAN

    return _each(args.notebooks, check)


def _scrub(args: argparse.Namespace) -> int:
    from footprint_lab.notebook import scrub

    if args.out is not None and len(args.notebooks) != 1:
        args.parser.error("--out takes one notebook")  # exits 2
    policy = _policy(args)

    def clean(path: Path) -> int:
        masked = scrub(path, redact=policy, out=args.out)
        print(f"{path}: masked {len(masked)} place(s)" + (f" -> {args.out}" if args.out else ""))
        return CLEAN

    return _each(args.notebooks, clean)


def _html(args: argparse.Namespace) -> int:
    from footprint_lab.notebook import to_html
    from footprint_lab.notebook.read import output_path

    output_path(args.out, "out", reading=args.notebook)  # a page written over the notebook would replace it
    written = to_html(args.notebook, args.out)
    print(f"{args.notebook} -> {written}")
    return CLEAN


def _verify(args: argparse.Namespace) -> int:
    from footprint_lab.notebook import verify_file

    def check(path: Path) -> int:
        worst = CLEAN
        for where, verdict in verify_file(path):
            print(f"{path}: {where}: {verdict}")
            if verdict.status == "unsupported":
                worst = max(worst, REFUSED)
            elif verdict.status == "broken" or (args.require_seal and verdict.status == "unsealed"):
                worst = max(worst, FINDINGS)
        return worst

    return _each(args.files, check)


def _lint_tools(args: argparse.Namespace) -> int:
    findings = lint_findings(args.catalog, threshold=THRESHOLD if args.threshold is None else args.threshold)
    for finding in findings:
        about = finding.tool + (f" / {finding.other}" if finding.other else "") + (
            f" ({finding.parameter})" if finding.parameter else "")
        print(f"{finding.severity}: {finding.check}: {about}: {finding.message}. Fix: {finding.fix}")
    errors = sum(finding.severity == "error" for finding in findings)
    print(f"{args.catalog}: {len(findings)} finding(s), {errors} error(s)")
    return FINDINGS if errors else CLEAN


if __name__ == "__main__":
    sys.exit(main())
