"""The app's controllers: keeping the screen in step with its source (`watcher`), saving the run
index (`index_saver`), resuming a run in this process (`resumer`), deciding gated calls
(`approver`), forking (`forker`), reading runs whole to compare or play them back
(`run_reader`), operating the store (`store_keeper`). They work (workers, timers) and report to
the screen only by messages, nested on them; they never import `tui.app`, `tui.screens` or
`tui.widgets`."""
