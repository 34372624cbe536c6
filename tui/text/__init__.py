"""What the screens say, textual-free: untrusted text made literal (`literal`), and the words,
styles and layout of rows, timeline lines, details and notices. Reads `agentor.sources`; knows
nothing of widgets or controllers."""
