"""Make untrusted text safe to put on a terminal: every control character becomes visible.

Shared by the `agentor` command and the TUI (textual-free). Text from run logs (model output,
tool results, prompts, names, errors) is shown literally. A terminal obeys the escape
sequences in what it is sent, and Rich `Text` and Textual `Content` pass them through, so
`ESC [2J` would clear the screen and `ESC ] 52` would write the clipboard. Each such character
is replaced by a visible stand-in *before* the text is printed or any `Text` is built from it.
"""

from __future__ import annotations

import re

# C0 controls show as their Unicode "control picture" (ESC -> ␛, BEL -> ␇), DEL as ␡; or, in a
# process whose screen has no font with those pictures, as Python-style escapes
# (`show_controls_as_escapes`).
_PICTURES = {code: chr(0x2400 + code) for code in range(32)}
_PICTURES[0x7F] = "\u2421"
_DRAWN = dict(_PICTURES)

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


def show_controls_as_escapes(on: bool = True) -> None:
    """From now on in this process, C0 controls and DEL show as `\\x1b`, `\\x07`, `\\x7f` (as C1
    controls always do) instead of their pictures; `on=False`: as pictures again. For a
    screen none of whose fonts has the pictures, where `␛` would be drawn as an empty box: the
    TUI in a browser (`agentor-tui serve`; its page's fonts have none)."""
    for code, picture in _DRAWN.items():
        _PICTURES[code] = f"\\x{code:02x}" if on else picture
