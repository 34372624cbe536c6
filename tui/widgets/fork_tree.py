"""`ForkTreeScreen`: `L`, the selected run's lineage as a tree: its root ancestor and every fork
below it (forks of forks too), each with its status, fork point and edit. `enter` on a node
opens that run (the screen's result is its id); `esc` closes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from agentor.sources.lineage import ForkNode
from tui.keys import bindings
from tui.keys.model import FORK_TREE
from tui.text.fork_text import tree_label
from tui.text.formatting import short_id


class ForkTreeScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = bindings(FORK_TREE)
    DEFAULT_CSS = """
    ForkTreeScreen { align: center middle; }
    #fork-tree {
        width: 110; max-width: 95%; height: auto; max-height: 90%;
        border: round magenta; border-title-style: bold;
        border-subtitle-color: $text-muted; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, top: ForkNode, selected: str) -> None:
        super().__init__()
        self.top, self.selected = top, selected

    def compose(self) -> ComposeResult:
        tree: Tree[str] = Tree(tree_label(self.top), data=self.top.run_id, id="fork-tree")
        tree.guide_depth = 3
        yield tree

    def on_mount(self) -> None:
        tree = self.query_one("#fork-tree", Tree)
        found = self._grow(tree.root, self.top)
        tree.root.expand_all()
        count = sum(1 for _ in _walk(self.top)) - 1
        tree.border_title = Content(
            f"Fork tree of {short_id(self.top.run_id)} · {count} fork{'s' if count != 1 else ''}"
        )
        tree.border_subtitle = Content("enter opens a run · esc closes")
        tree.focus()
        if found is not None:
            self.call_after_refresh(tree.move_cursor, found)

    def _grow(self, node: TreeNode[str], fork: ForkNode) -> TreeNode[str] | None:
        """Add `fork`'s forks under `node`; the node of the selected run, if below."""
        found = node if fork.run_id == self.selected else None
        for child in fork.forks:
            label: Text = tree_label(child)
            branch = node.add(label, data=child.run_id, allow_expand=bool(child.forks))
            found = self._grow(branch, child) or found
        return found

    def on_tree_node_selected(self, event: Tree.NodeSelected[str]) -> None:
        event.stop()
        if event.node.data is not None:
            self.dismiss(event.node.data)

    def action_cancel(self) -> None:
        self.dismiss(None)


def _walk(node: ForkNode) -> Iterator[ForkNode]:
    yield node
    for child in node.forks:
        yield from _walk(child)
