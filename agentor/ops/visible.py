"""Untrusted text (model output, tool results, prompts, ids, errors) made safe to show: every
control character becomes a visible stand-in, so that what a log holds can never act on the
screen, the terminal or a document it is written into (an escape sequence that clears the
screen or writes the clipboard, a bidi override that reorders what follows).

The same rule as the TUI's (tui/literal.py), for what the engine itself hands out to be shown:
search snippets and exported runs. C0 controls show as their Unicode control pictures (ESC as
␛), DEL as ␡; C1 controls, bidi overrides and isolates and lone surrogates as Python-style
escapes (\\x9b, \\u202e, \\udcff).
"""

from __future__ import annotations

import re

_PICTURES = {code: chr(0x2400 + code) for code in range(32)}
_PICTURES[0x7F] = "\u2421"
_ESCAPED = "\x80-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE_ONE_LINE = re.compile(f"[\x00-\x1f\x7f{_ESCAPED}\u2028\u2029]")
_UNSAFE_MULTI_LINE = re.compile(f"[\x00-\x09\x0b-\x1f\x7f{_ESCAPED}\u2028\u2029]")


def _stand_in(char: str) -> str:
    code = ord(char)
    if code in _PICTURES:
        return _PICTURES[code]
    if code in (0x2028, 0x2029):
        return "\n"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _one_line(match: re.Match[str]) -> str:
    char = match.group()
    if char in "\n\u2028\u2029":
        return "⏎"
    if char == "\t":
        return " "
    return _stand_in(char)


def visible_text(text: str) -> str:
    """`text` with its newlines kept, tabs as four spaces, every other control character
    visible."""
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    if "\t" in text:
        text = text.expandtabs(4)
    return _UNSAFE_MULTI_LINE.sub(lambda m: _stand_in(m.group()), text)


def visible_line(text: str) -> str:
    """`text` on one line (newlines as ⏎, tabs as a space), every control character visible."""
    return _UNSAFE_ONE_LINE.sub(_one_line, text)
