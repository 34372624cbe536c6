"""The TUI's data layer, textual-free: where runs come from (`source.RunSource`, the seam), the
directory source and how it reads logs. Imports nothing of the TUI's other layers."""
