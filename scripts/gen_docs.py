"""Writes the reference parts of the manual into its pages, made from the code, so that a page
read as a file (on GitHub, in an editor) holds the reference and not a placeholder:

- `docs/cli.md`: the `agentor` and `agentor-tui` commands, from their argument parsers
  (`agentor.cli.build_parser`, `tui.cli.build_parser`): every subcommand, its usage and every
  argument with its help;
- `docs/api.md`, `docs/api-ops.md`, `docs/api-testing.md`, `docs/errors.md`: every public name
  (`agentor.__all__`, `agentor.ops.__all__`, the modules `agentor.testing` and
  `agentor.errors`), its signature and docstring, read by griffe as mkdocstrings reads them;
- `docs/log-format.md`: every event type, what it means and its fields, from their
  declaration (`agentor.engine.events.EVENT_TYPES`).

Each reference lies between `<!-- KIND-reference: NAME ... -->` and `<!-- end KIND-reference
-->` in its page; only that part of the page is written. Signatures are ```py blocks (not
```python: those are samples that tests/test_docs_samples.py runs). The site shows the same
references (scripts/docs_hooks.py): the command reference as written here, the API's through
mkdocstrings, from the same docstrings.

    python scripts/gen_docs.py           # rewrite the pages that are not current
    python scripts/gen_docs.py --check   # exit 1 naming them, write nothing

tests/test_docs.py fails when a committed page is not what this writes.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = ("cli.md", "api.md", "api-ops.md", "api-testing.md", "errors.md", "log-format.md")
REGION = re.compile(
    r"(?P<start><!-- (?P<kind>cli|api|events)-reference: (?P<name>[\w.-]+)[^\n]*-->\n)"
    r"(?P<body>.*?)"
    r"(?P<end><!-- end (?P=kind)-reference -->)",
    re.S,
)
# Wide enough that no usage wraps mid-option in the page; fixed, so the page does not depend on
# the terminal the script runs in.
USAGE_WIDTH = 100
SIGNATURE_WIDTH = 96
PROSE_WIDTH = 96  # the pages' own lines

# The API page's sections: a public name's defining module (its prefix) -> the heading.
SECTIONS = (
    ("agentor.agent", "The agent"),
    ("agentor.result", "The agent"),
    ("agentor.engine.tools", "Tools"),
    ("agentor.engine.models", "Models"),
    ("agentor.engine.events", "Events"),
    ("agentor.engine.store", "Stores"),
    ("agentor.backends", "Stores"),
    ("agentor.engine.approval", "Human approval"),
    ("agentor.engine.fork", "Comparing runs"),
)


def current(text: str) -> str:
    """`text` (a page) with each of its references as the code makes it now."""
    return REGION.sub(lambda m: m["start"] + reference(m["kind"], m["name"]) + m["end"], text)


def reference(kind: str, name: str) -> str:
    """The Markdown of one reference (ending in a newline)."""
    if kind == "cli" and name == "agentor":
        from agentor.cli import build_parser

        return cli_reference(build_parser())
    if kind == "cli" and name == "agentor-tui":
        from tui.cli import build_parser

        return cli_reference(build_parser(), subcommands=False)
    if kind == "api" and name == "agentor":
        return api_sections()
    if kind == "api" and name == "agentor.ops":
        import agentor.ops

        return "\n".join(render(_griffe()[f"ops.{n}"], level=3) for n in agentor.ops.__all__)
    if kind == "api" and name in ("agentor.testing", "agentor.errors"):
        return module_reference(_griffe()[name.removeprefix("agentor.")])
    if kind == "events" and name == "agentor.engine.events":
        return events_reference()
    raise ValueError(f"no {kind} reference named {name!r}")


# -- the event types -----------------------------------------------------------------------------


def events_reference() -> str:
    """Each event type: a heading, what it means, its fields."""
    from agentor.engine.events import EVENT_TYPES

    parts = []
    for t in EVENT_TYPES.values():
        said = t.means
        if t.transient:
            said += " Never written to a log: a live run hands it to its listeners only."
        named = "Fields: " + ", ".join(f"`{f}`" for f in (*t.fields, *t.extra)) + "."
        parts += [f"### `{t.name}`", "", _wrapped(said), "", _wrapped(named), ""]
    return "\n".join(parts) + "\n"


def _wrapped(text: str) -> str:
    return textwrap.fill(text, PROSE_WIDTH, break_long_words=False, break_on_hyphens=False)


# -- the API references --------------------------------------------------------------------------


_PACKAGE: Any = None


def _griffe() -> Any:
    """The `agentor` package as griffe reads it from the source (what mkdocstrings shows)."""
    global _PACKAGE
    if _PACKAGE is None:
        import griffe

        _PACKAGE = griffe.load("agentor", search_paths=[str(ROOT)], docstring_parser="google")
    return _PACKAGE


def api_groups() -> tuple[dict[str, list[str]], set[str]]:
    """`agentor.__all__` but the errors, by the API page's sections (in the page's order), and
    the errors (which have a page of their own)."""
    import agentor

    errors = {n for n in agentor.__all__ if getattr(agentor, n).__module__ == "agentor.errors"}
    sections: dict[str, list[str]] = {}
    for name in agentor.__all__:
        if name not in errors:
            module = getattr(agentor, name).__module__
            heading = next((h for prefix, h in SECTIONS if module.startswith(prefix)), "Other")
            sections.setdefault(heading, []).append(name)
    order = [h for _, h in SECTIONS] + ["Other"]
    return {h: sections[h] for h in sorted(sections, key=order.index)}, errors


def api_sections() -> str:
    sections, errors = api_groups()
    parts = []
    for heading, names in sections.items():
        parts.append(f"## {heading}\n")
        parts += [render(_griffe()[name], level=3) for name in names]
    parts.append(errors_paragraph(errors))
    return "\n".join(parts)


def errors_paragraph(errors: set[str]) -> str:
    return (
        "## Errors\n\n"
        + ", ".join(f"[`{n}`](errors.md#agentor.errors.{n})" for n in sorted(errors))
        + ": every one an `AgentorError`, importable from `agentor`; see [Errors](errors.md).\n"
    )


def module_reference(module: Any) -> str:
    """A module's docstring, then each of its public members that has a docstring."""
    parts = [_docstring(module)] if module.docstring else []
    parts += [render(m, level=3) for m in _documented_members(module)]
    return "\n".join(parts)


def render(obj: Any, *, level: int, anchor: str | None = None) -> str:
    """One public object: an anchor named as mkdocstrings names it on the site
    (`agentor.Agentor`, `agentor.Agentor.run`), a heading, its signature, its docstring, then
    (a class) its documented members one level down."""
    target = obj.final_target if obj.is_alias else obj
    anchor = anchor or obj.path
    title = anchor.removeprefix("agentor.").removeprefix("ops.").removeprefix("errors.")
    title = title.removeprefix("testing.")
    lines = [f'<a id="{anchor}"></a>', "", f"{'#' * level} `{title}`", ""]
    lines += ["```py", signature(target), "```", ""]
    if target.kind.value == "class" and target.bases:
        lines += ["Bases: " + ", ".join(f"`{b}`" for b in map(str, target.bases)), ""]
    if target.docstring:
        lines.append(_docstring(target))
    text = "\n".join(lines)
    if target.kind.value == "class":
        for member in _documented_members(target):
            text += "\n" + render(member, level=level + 1, anchor=f"{anchor}.{member.name}")
    return text


def _documented_members(obj: Any) -> list[Any]:
    """What mkdocstrings lists of `obj` (mkdocs.yml: no `_` names, none without a docstring,
    in source order): its own members, not aliases of other modules' names."""
    found = []
    for name, member in obj.members.items():
        if name.startswith("_") or member.is_alias:
            continue
        if member.docstring or (member.kind.value == "class" and _documented_members(member)):
            found.append(member)
    return found


def _docstring(obj: Any) -> str:
    return obj.docstring.value.strip() + "\n"


def signature(obj: Any) -> str:
    kind = obj.kind.value
    if kind == "module":
        return f"import {obj.path}"
    if kind == "attribute":
        text = obj.name
        if obj.annotation is not None:
            text += f": {obj.annotation}"
        if "property" in obj.labels:
            return f"@property\n{text}"
        return text + (f" = {obj.value}" if obj.value is not None else "")
    if kind == "class":
        init = obj.all_members.get("__init__")
        params = _parameters(init.parameters) if init is not None else []
        return _call(f"class {obj.name}", params, None)
    decorators = [f"@{label}" for label in sorted(obj.labels) if label.endswith("method")]
    prefix = "async def" if "async" in obj.labels else "def"
    call = _call(f"{prefix} {obj.name}", _parameters(obj.parameters), obj.returns)
    return "\n".join([*decorators, call])


def _parameters(parameters: Any) -> list[str]:
    out: list[str] = []
    starred = False
    params = [p for p in parameters if p.name not in ("self", "cls")]
    for i, p in enumerate(params):
        kind = p.kind.value
        if kind == "keyword-only" and not starred:
            out.append("*")
            starred = True
        text = p.name
        if kind == "variadic positional":
            text, starred = f"*{p.name}", True
        elif kind == "variadic keyword":
            text = f"**{p.name}"
        if p.annotation is not None:
            text += f": {p.annotation}"
        if p.default is not None and not kind.startswith("variadic"):
            text += (" = " if p.annotation is not None else "=") + str(p.default)
        out.append(text)
        following = params[i + 1].kind.value if i + 1 < len(params) else None
        if kind == "positional-only" and following != "positional-only":
            out.append("/")
    return out


def _call(head: str, params: list[str], returns: Any) -> str:
    tail = f" -> {returns}" if returns is not None else ""
    one_line = f"{head}({', '.join(params)}){tail}"
    if len(one_line) <= SIGNATURE_WIDTH or not params:
        return one_line
    return "\n".join([f"{head}(", *(f"    {p}," for p in params), f"){tail}"])


# -- the command references ----------------------------------------------------------------------


@contextmanager
def _usage_width() -> Iterator[None]:
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(USAGE_WIDTH + 2)  # argparse leaves two columns
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def cli_reference(parser: argparse.ArgumentParser, *, subcommands: bool = True) -> str:
    with _usage_width():
        if not subcommands:
            return _command(parser, parser.prog, level=2)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        helps = {choice.dest: choice.help for choice in sub._choices_actions}
        parts = [_command(parser, parser.prog, level=2, options_only=True)]
        for name, command in sub.choices.items():
            parts.append(_command(command, command.prog, level=3, summary=helps.get(name)))
            parts.extend(_verbs(command))
        return "\n".join(parts)


def _verbs(parser: argparse.ArgumentParser) -> list[str]:
    """A command's own subcommands (`agentor experiment run`), a section each."""
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not found:
        return []
    helps = {choice.dest: choice.help for choice in found[0]._choices_actions}
    return [
        _command(verb, verb.prog, level=4, summary=helps.get(name))
        for name, verb in found[0].choices.items()
    ]


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
    # A pipe in a code span ends a table cell on GitHub, and escaped with a backslash it shows
    # the backslash on the site: an HTML code element, the pipe an entity, reads right in both.
    code = f"<code>{name.replace('|', '&#124;')}</code>" if "|" in name else f"`{name}`"
    return f"| {code} | {_cell('; '.join(n for n in notes if n))} |"


def _sentence(text: str) -> str:
    # A usage line in prose (`[--host HOST]`) is text, not a Markdown link.
    text = " ".join(text.split()).replace("[", "\\[")
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", ")", ":")) else text + "."


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


# -- the command ---------------------------------------------------------------------------------


def stale_pages() -> dict[Path, str]:
    """Each page whose references are not current, with what it should hold."""
    found = {}
    for name in PAGES:
        page = DOCS / name
        text = page.read_text()
        if not REGION.search(text):
            raise SystemExit(f"gen_docs: {page} has no reference to write")
        if (made := current(text)) != text:
            found[page] = made
    return found


def main(argv: list[str] | None = None) -> int:
    cli = argparse.ArgumentParser(description="Write the manual's references from the code.")
    cli.add_argument("--check", action="store_true", help="name stale pages, write nothing")
    args = cli.parse_args(argv)
    stale = stale_pages()
    for page, text in stale.items():
        if args.check:
            print(f"not current: {page.relative_to(ROOT)} (run: python scripts/gen_docs.py)")
        else:
            page.write_text(text)
            print(f"wrote {page.relative_to(ROOT)}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
