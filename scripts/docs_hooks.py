"""mkdocs hooks (mkdocs.yml `hooks:`): the parts of the manual made from the code, as the site
shows them.

- The references scripts/gen_docs.py writes into the pages (between `<!-- KIND-reference:
  NAME ... -->` and `<!-- end KIND-reference -->`) are made again here, so the site is current
  even when a page is not (tests/test_docs.py fails on such a page): a command's and the event
  types' as gen_docs.py writes them; the API's as mkdocstrings blocks
  (`::: agentor.NAME`), which render the same docstrings and signatures with cross-references
  and the anchors (`#agentor.Agentor`) the written pages give too.
- The screenshots in `screenshots/` (written by `make screenshots`, shown in the README too)
  are added to the site, so pages link them as `screenshots/NAME.svg` (or `.png`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import gen_docs  # noqa: E402 (scripts/ is not a package: found through the path just set)

# A whole module on one page (the errors, the test model): its docstring, then its members.
MODULE_PAGE = "    options:\n      show_root_heading: false\n      show_root_toc_entry: false\n"


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
    return gen_docs.REGION.sub(lambda m: _for_the_site(m["kind"], m["name"]), markdown)


def _for_the_site(kind: str, name: str) -> str:
    if kind in ("cli", "events"):
        return gen_docs.reference(kind, name)
    if name == "agentor":
        return api_reference()
    if name == "agentor.ops":
        import agentor.ops

        return "\n".join(f"::: agentor.ops.{n}\n" for n in agentor.ops.__all__)
    if name in ("agentor.testing", "agentor.errors"):
        return f"::: {name}\n{MODULE_PAGE}"
    raise ValueError(f"no {kind} reference named {name!r}")


def api_reference() -> str:
    sections, errors = gen_docs.api_groups()
    parts = []
    for heading, names in sections.items():
        parts.append(f"## {heading}\n")
        parts += [f"::: agentor.{name}\n" for name in names]
    parts.append(gen_docs.errors_paragraph(errors))
    return "\n".join(parts)
