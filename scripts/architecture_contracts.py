"""The import contracts of docs/architecture.md, made from pyproject.toml's import-linter
contracts, so the page cannot say another rule than the one `lint-imports` checks.

`python scripts/architecture_contracts.py` rewrites the part of the page between the two
markers; tests/test_architecture_doc.py fails when the page is not what this makes.
"""

from __future__ import annotations

import re
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- contracts: made by scripts/architecture_contracts.py from pyproject.toml -->"
END = "<!-- contracts: end -->"


def contracts(pyproject: Path = ROOT / "pyproject.toml") -> list[dict[str, Any]]:
    return tomllib.loads(pyproject.read_text())["tool"]["importlinter"]["contracts"]


def _names(modules: list[str]) -> str:
    return ", ".join(f"`{m}`" for m in modules)


def _item(text: str) -> list[str]:
    return textwrap.wrap(f"- {text}", width=96, subsequent_indent="  ", break_on_hyphens=False)


def _forbidden(contract: dict[str, Any]) -> list[str]:
    sources = contract["source_modules"]
    return _item(
        f"**{contract['name']}**: {_names(sources)} import{'s' if len(sources) == 1 else ''} "
        f"none of {_names(contract['forbidden_modules'])}."
    )


def layer_rows(contract: dict[str, Any]) -> list[tuple[list[str], bool, list[str]]]:
    """(the modules of a layer, whether they may import each other, the modules below it),
    top to bottom. In import-linter's notation `a | b` are independent, `a : b` are not."""
    (container,) = contract["containers"]
    layers = [
        ([f"{container}.{name.strip()}" for name in re.split(r"[|:]", layer)], ":" in layer)
        for layer in contract["layers"]
    ]
    return [
        (modules, siblings, [m for below, _ in layers[i + 1 :] for m in below])
        for i, (modules, siblings) in enumerate(layers)
    ]


def _layers(contract: dict[str, Any]) -> list[str]:
    lines = _item(
        f"**{contract['name']}**: a layer may import the layers below it, none above it; "
        "the modules of one layer do not import each other unless the table says they may."
    )
    lines += ["", "  | layer | may import |", "  |---|---|"]
    for modules, siblings, below in layer_rows(contract):
        allowed = ", ".join(f"`{m.rsplit('.', 1)[1]}`" for m in below) or "no other layer"
        if siblings:
            allowed = f"each other, {allowed}"
        lines.append(f"  | {_names(modules)} | {allowed} |")
    outside = unlayered(contract)
    if outside:
        text = f"Outside the layers, so this contract does not hold them: {_names(outside)}."
        lines += ["", *textwrap.wrap(text, width=96, initial_indent="  ", subsequent_indent="  ")]
    return lines


def unlayered(contract: dict[str, Any]) -> list[str]:
    """The container's own modules and packages that no layer names."""
    (container,) = contract["containers"]
    layered = {m for modules, _, _ in layer_rows(contract) for m in modules}
    children = sorted(
        f"{container}.{p.stem}"
        for p in (ROOT / container).iterdir()
        if (p.suffix == ".py" and not p.stem.startswith("__")) or (p / "__init__.py").is_file()
    )
    return [m for m in children if m not in layered]


def contracts_markdown(pyproject: Path = ROOT / "pyproject.toml") -> str:
    """The page's block: one item a contract, in pyproject.toml's order."""
    render = {"forbidden": _forbidden, "layers": _layers}
    lines = [BEGIN, ""]
    for contract in contracts(pyproject):
        lines += [*render[contract["type"]](contract), ""]
    return "\n".join([*lines, END])


def current_block(page: str) -> str:
    """The block as the page has it now (empty when its markers are missing)."""
    start, end = page.find(BEGIN), page.find(END)
    return page[start : end + len(END)] if 0 <= start < end else ""


def main() -> int:
    page = PAGE.read_text()
    block = current_block(page)
    if not block:
        print(f"{PAGE.relative_to(ROOT)}: no `{BEGIN}` ... `{END}` block", file=sys.stderr)
        return 1
    PAGE.write_text(page.replace(block, contracts_markdown()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
