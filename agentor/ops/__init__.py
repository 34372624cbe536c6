"""Operating a store for months: retention (`retention`), export (`export`), search across runs
(`search`) and what runs cost (`pricing`). Functions over any store; the `agentor` command and
the TUI call them. Each module is imported on its own (`import agentor` loads none of them).
"""
