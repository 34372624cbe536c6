"""The help screen's section "Approval": its keys, each with the bindings behind it."""

from __future__ import annotations

from tui.keys.model import APPROVALS, ARGS_EDITOR, REASON_SCREEN, Bind, Key

SECTION = (
    "Approval (in the approvals pane)",
    (
        Key(
            "a  A",
            "approve the highlighted call / every call that waits",
            Bind(
                APPROVALS,
                "a",
                "approve",
                "Approve",
                palette=("Approve call", "Approve the highlighted call waiting for approval"),
            ),
            Bind(
                APPROVALS,
                "A,shift+a",
                "approve_all",
                "Approve all",
                palette=("Approve all calls", "Approve every call of the run that waits"),
            ),
        ),
        Key(
            "e, ctrl+s",
            "edit its arguments, then approve (a bad edit never is)",
            Bind(
                APPROVALS,
                "e",
                "edit",
                "Edit & approve",
                palette=("Edit and approve", "Edit the call's arguments, then approve"),
            ),
            Bind(ARGS_EDITOR, "ctrl+s", "save", "Approve"),
            Bind(ARGS_EDITOR, "escape", "cancel", "Cancel"),
        ),
        Key(
            "n",
            "reject it, with a reason (the model is told it)",
            Bind(
                APPROVALS,
                "n",
                "reject",
                "Reject",
                palette=("Reject call", "Reject the highlighted call, with a reason"),
            ),
            Bind(REASON_SCREEN, "escape", "cancel", "Cancel"),
        ),
        Key(
            "g",
            "a call interrupted while running: give the result it had (it is not run again)",
            # Shown while the highlighted call is one a crash interrupted (ApprovalList's
            # check_action); on any other call its hidden twin says why it cannot be given one.
            Bind(
                APPROVALS,
                "g",
                "give_result",
                "Give result",
                palette=("Give the result it had", "Record an interrupted call's result"),
            ),
            Bind(APPROVALS, "g", "no_result_to_give", "Give result", show=False),
        ),
    ),
)
