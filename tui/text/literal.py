"""Make untrusted text safe to put on a terminal: every control character becomes visible.

Text from run logs (model output, tool results, prompts) is shown literally. Rich `Text` and
Textual `Content` never parse it as markup, but they pass escape sequences through to the
terminal, so `ESC [2J` would clear the screen and `ESC ] 52` would write the clipboard. Each
such character is replaced by a visible stand-in *before* any `Text` is built from it.
"""

from __future__ import annotations

import re

# C0 controls show as their Unicode "control picture" (ESC -> ␛, BEL -> ␇), DEL as ␡.
_PICTURES = {code: chr(0x2400 + code) for code in range(32)}
_PICTURES[0x7F] = "\u2421"

# C1 controls, bidi overrides/isolates (which reorder what follows them on screen) and lone
# surrogates (which cannot even be encoded for the terminal) show as Python-style escapes.
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


def _multi_line(match: re.Match[str]) -> str:
    return _stand_in(match.group())


def _one_line(match: re.Match[str]) -> str:
    char = match.group()
    if char in "\n\u2028\u2029":
        return "⏎"
    if char == "\t":
        return " "
    return _stand_in(char)


def literal(text: str) -> str:
    """`text` with its newlines kept, tabs as spaces, every other control character visible."""
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    if "\t" in text:
        text = text.expandtabs(4)
    return _UNSAFE_MULTI_LINE.sub(_multi_line, text)


def literal_line(text: str, limit: int | None = None) -> str:
    """`text` on one line (newlines as ⏎), control characters visible, cut to `limit`."""
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return _UNSAFE_ONE_LINE.sub(_one_line, text)
