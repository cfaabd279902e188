"""``footprint-lab``: the sharing functions from a shell, a CI job or a pre-commit hook.

    footprint-lab scan  NOTEBOOK...  [policy]    exit 1 when anything still matches
    footprint-lab scrub NOTEBOOK...  [policy] [--out PATH]
    footprint-lab html  NOTEBOOK     --out PAGE.html
    footprint-lab verify FILE...     [--require-seal]   (.ipynb, or a saved .json recording or checkpoint)
    footprint-lab lint-tools CATALOG.json [--threshold X]

The policy is ``Redaction.standard()`` (common secret keys and every built-in pattern) plus
``--key NAME``, ``--pattern NAME=REGEX`` and ``--builtin NAME``; ``--only`` drops the standard
set. What matched is printed by place and name, never by value. ``scan`` also reports widget
state that would break GitHub's renderer. ``verify`` checks the seal of every recording a notebook
(or a ``.json`` file) carries and prints one verdict per recording; it exits 1 on a broken seal
(and, with ``--require-seal``, on an unsealed recording). Exit codes: 0 clean, 1 findings, 2 a
refused argument. ``lint-tools`` prints what ``footprint_lab.lint_tools`` finds in a tool catalog
(OpenAI, Anthropic, MCP ``tools/list`` or plain JSON) and exits 1 when any finding is an error.

Role: lab layer; ``[project.scripts]`` points ``footprint-lab`` at :func:`main`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from footprint_lab.engine.redaction import Redaction
from footprint_lab.engine.refusal import Refusal


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; returns the exit code (0 clean, 1 findings, 2 refused)."""
    args = _parser().parse_args(argv)
    try:
        return int(args.command(args))
    except Refusal as refusal:
        print(f"footprint-lab: {refusal.code}: {refusal}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="footprint-lab", description="Share notebooks that carry footprint_lab "
                                     "recordings: find and mask secrets, write offline HTML.")
    commands = parser.add_subparsers(required=True, metavar="{scan,scrub,html,verify,lint-tools}")
    scan = commands.add_parser("scan", help="list what a redaction policy still finds (exit 1 when anything)")
    scan.add_argument("notebooks", nargs="+", type=Path)
    _policy_options(scan)
    scan.set_defaults(command=_scan)
    scrub = commands.add_parser("scrub", help="mask what a redaction policy finds, in place or to --out")
    scrub.add_argument("notebooks", nargs="+", type=Path)
    scrub.add_argument("--out", type=Path, help="write the scrubbed copy here (one notebook only)")
    _policy_options(scrub)
    scrub.set_defaults(command=_scrub)
    html = commands.add_parser("html", help="write one self-contained, offline HTML page")
    html.add_argument("notebook", type=Path)
    html.add_argument("--out", type=Path, required=True)
    html.set_defaults(command=_html)
    verify = commands.add_parser("verify", help="check the seal of every recording in .ipynb or .json files "
                                 "(exit 1 when one is broken)")
    verify.add_argument("files", nargs="+", type=Path)
    verify.add_argument("--require-seal", action="store_true", help="also exit 1 when a recording is not sealed")
    verify.set_defaults(command=_verify)
    lint = commands.add_parser("lint-tools", help="lint a tool catalog (.json); exit 1 when it has errors")
    lint.add_argument("catalog", type=Path)
    lint.add_argument("--threshold", type=float, default=None, help="similarity from which two tools are confusable")
    lint.set_defaults(command=_lint_tools)
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
    if args.only:
        if extra is None:
            raise SystemExit("footprint-lab: --only needs at least one --key, --pattern or --builtin")
        return extra
    return Redaction.standard().union(extra)


def _scan(args: argparse.Namespace) -> int:
    from footprint_lab.notebook import check_widget_state, scan

    policy = _policy(args)
    dirty = 0
    for path in args.notebooks:
        for finding in scan(path, redact=policy):
            print(f"{path}: {finding}")
            dirty += 1
        for problem in check_widget_state(path):
            print(f"{path}: widget state: {problem.problem}" + (f" ({problem.widget})" if problem.widget else ""))
            dirty += 1
    return 1 if dirty else 0


def _scrub(args: argparse.Namespace) -> int:
    from footprint_lab.notebook import scrub

    if args.out is not None and len(args.notebooks) != 1:
        raise SystemExit("footprint-lab scrub: --out takes one notebook")
    policy = _policy(args)
    for path in args.notebooks:
        masked = scrub(path, redact=policy, out=args.out)
        print(f"{path}: masked {len(masked)} place(s)" + (f" -> {args.out}" if args.out else ""))
    return 0


def _html(args: argparse.Namespace) -> int:
    from footprint_lab.notebook import to_html

    written = to_html(args.notebook, args.out)
    print(f"{args.notebook} -> {written}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from footprint_lab.notebook import verify_file

    failed = 0
    for path in args.files:
        for where, verdict in verify_file(path):
            print(f"{path}: {where}: {verdict}")
            failed += verdict.status == "broken" or (args.require_seal and verdict.status == "unsealed")
    return 1 if failed else 0


def _lint_tools(args: argparse.Namespace) -> int:
    from footprint_lab.explain.tool_lint import THRESHOLD, lint_findings

    findings = lint_findings(args.catalog, threshold=THRESHOLD if args.threshold is None else args.threshold)
    for finding in findings:
        about = finding.tool + (f" / {finding.other}" if finding.other else "") + (
            f" ({finding.parameter})" if finding.parameter else "")
        print(f"{finding.severity}: {finding.check}: {about}: {finding.message}. Fix: {finding.fix}")
    errors = sum(finding.severity == "error" for finding in findings)
    print(f"{args.catalog}: {len(findings)} finding(s), {errors} error(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
