"""mkdocs hooks (mkdocs.yml `hooks:`): the parts of the manual made from the code at build time,
so that they cannot drift from it.

- `<!-- cli-reference: agentor -->` and `<!-- cli-reference: agentor-tui -->` in a page become
  the reference of that command, made from its argument parser (`agentor.cli.build_parser`,
  `tui.cli.build_parser`): every subcommand, its usage and every argument with its help.
- `<!-- api-reference: agentor -->` becomes an mkdocstrings block (`::: agentor.NAME`) for
  every name in `agentor.__all__` but the errors, grouped by what they are, and
  `<!-- api-reference: agentor.ops -->` one for every name in `agentor.ops.__all__`: a name
  added to a public face appears in the manual without an edit here.
- The screenshots in `screenshots/` (written by `make screenshots`, shown in the README too)
  are added to the site, so pages link them as `screenshots/NAME.svg` (or `.png`).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
MARK = re.compile(r"<!-- (cli|api)-reference: ([\w.-]+) -->")

# The API page's sections: a public name's defining module (its prefix) -> the heading.
SECTIONS = (
    ("agentor.agent", "The agent"),
    ("agentor.result", "The agent"),
    ("agentor.engine.tools", "Tools"),
    ("agentor.engine.models", "Models"),
    ("agentor.engine.events", "Events"),
    ("agentor.engine.store", "Stores"),
    ("agentor.engine.approval", "Human approval"),
    ("agentor.engine.fork", "Comparing runs"),
)


def on_files(files: Files, config: Any) -> Files:
    for shot in sorted((ROOT / "screenshots").glob("*.[ps][nv]g")):
        files.append(
            File(
                f"screenshots/{shot.name}",
                src_dir=str(ROOT),
                dest_dir=config["site_dir"],
                use_directory_urls=config["use_directory_urls"],
            )
        )
    return files


def on_page_markdown(markdown: str, **_: Any) -> str:
    return MARK.sub(lambda m: _reference(m.group(1), m.group(2)), markdown)


def _reference(kind: str, name: str) -> str:
    if kind == "api" and name == "agentor":
        return api_reference()
    if kind == "api" and name == "agentor.ops":
        import agentor.ops

        return "\n".join(f"::: agentor.ops.{n}\n" for n in agentor.ops.__all__)
    if kind == "cli" and name == "agentor":
        from agentor.cli import build_parser

        return cli_reference(build_parser())
    if kind == "cli" and name == "agentor-tui":
        from tui.cli import build_parser

        return cli_reference(build_parser(), subcommands=False)
    raise ValueError(f"no {kind} reference named {name!r}")


# -- the API reference ---------------------------------------------------------------------------


def api_reference() -> str:
    import agentor

    errors = {n for n in agentor.__all__ if getattr(agentor, n).__module__ == "agentor.errors"}
    sections: dict[str, list[str]] = {}
    for name in agentor.__all__:
        if name in errors:
            continue
        module = getattr(agentor, name).__module__
        heading = next((h for prefix, h in SECTIONS if module.startswith(prefix)), "Other")
        sections.setdefault(heading, []).append(name)
    order = [h for _, h in SECTIONS] + ["Other"]
    parts = []
    for heading in sorted(sections, key=order.index):
        parts.append(f"## {heading}\n")
        parts += [f"::: agentor.{name}\n" for name in sections[heading]]
    parts.append(
        "## Errors\n\n"
        + ", ".join(f"[`{n}`](errors.md#agentor.errors.{n})" for n in sorted(errors))
        + ": every one an `AgentorError`, importable from `agentor`; see [Errors](errors.md).\n"
    )
    return "\n".join(parts)


# -- the command references ----------------------------------------------------------------------


def cli_reference(parser: argparse.ArgumentParser, *, subcommands: bool = True) -> str:
    if not subcommands:
        return _command(parser, parser.prog, level=2)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {choice.dest: choice.help for choice in sub._choices_actions}
    parts = [_command(parser, parser.prog, level=2, options_only=True)]
    for name, command in sub.choices.items():
        parts.append(_command(command, command.prog, level=3, summary=helps.get(name)))
    return "\n".join(parts)


def _command(
    parser: argparse.ArgumentParser,
    prog: str,
    *,
    level: int,
    summary: str | None = None,
    options_only: bool = False,
) -> str:
    lines = [f"{'#' * level} {prog}", ""]
    text = summary or parser.description
    if text:
        lines += [_sentence(text), ""]
    if not options_only:
        usage = parser.format_usage().removeprefix("usage: ").strip()
        lines += ["```text", re.sub(r"\s*\n\s*", "\n    ", usage), "```", ""]
    rows = [_row(action) for action in parser._actions if _shown(action)]
    if rows:
        lines += ["| argument | what it is |", "|---|---|", *rows, ""]
    if parser.epilog:
        lines += [_sentence(parser.epilog), ""]
    return "\n".join(lines)


def _shown(action: argparse.Action) -> bool:
    if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
        return False  # the subcommands have sections of their own; -h is everywhere
    return action.help is not argparse.SUPPRESS


def _row(action: argparse.Action) -> str:
    if action.option_strings:
        name = ", ".join(action.option_strings)
        if action.nargs != 0:
            name += f" {action.metavar or action.dest.upper()}"
    else:
        name = action.metavar or action.dest
    notes = [" ".join((action.help or "").split())]
    if action.choices and not action.metavar:
        notes.append("one of " + ", ".join(f"`{c}`" for c in action.choices))
    if action.required and action.option_strings:
        notes.append("required")
    if isinstance(action, argparse._AppendAction):
        notes.append("may be repeated")
    return f"| `{name}` | {_cell('; '.join(n for n in notes if n))} |"


def _sentence(text: str) -> str:
    # A usage line in prose (`[--host HOST]`) is text, not a Markdown link.
    text = " ".join(text.split()).replace("[", "\\[")
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", ")", ":")) else text + "."


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
