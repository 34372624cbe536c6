"""The app's controllers: keeping the screen in step with its source (`watcher`) and resuming a
run in this process (`resumer`). They work (workers, timers) and report to the app only by
messages, nested on them; they never import `tui.app` or `tui.widgets`."""
