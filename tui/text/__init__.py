"""What the screens say, textual-free: untrusted text made literal (`literal`), and the words,
styles and layout of rows, timeline lines, details and notices. Reads `tui.data`; knows
nothing of widgets or controllers."""
