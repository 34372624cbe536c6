"""`agentor.literal`: untrusted text made safe for a terminal, shared by the `agentor` command
and the TUI. Every control character becomes a visible stand-in."""

from __future__ import annotations

from agentor.literal import literal, literal_line


def test_escape_sequences_and_controls_become_visible() -> None:
    hostile = "a\x1b]52;c;aGk=\x07b\x1b[2Jc\x00d\x7fe\x9bf"
    assert literal(hostile) == "a␛]52;c;aGk=␇b␛[2Jc␀d␡e\\x9bf"
    assert literal_line(hostile) == literal(hostile)


def test_bidi_overrides_and_lone_surrogates_are_escaped() -> None:
    assert literal("x\u202ey\u2066z\ud800") == "x\\u202ey\\u2066z\\ud800"


def test_newlines_are_kept_or_marked_and_tabs_become_spaces() -> None:
    assert literal("one\r\ntwo\tthree\u2028four") == "one\ntwo three\nfour"
    assert literal_line("one\ntwo\tthree\u2029") == "one⏎two three⏎"
    assert literal_line("x" * 10, 5) == "xxxx…"


# Every C0 control, DEL and every C1 control (NEL, CSI, OSC, ST among them), one at a time.
CONTROLS = [chr(c) for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))]


def shown_as(char: str) -> str:
    """The visible stand-in of one control character: its control picture (C0, DEL) or a
    Python-style escape (C1)."""
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)
    return "\u2421" if code == 0x7F else f"\\x{code:02x}"


def test_every_control_character_alone_becomes_visible() -> None:
    """Each one alone between two letters: a lone CR (`paid\\r$0` would rewrite the line
    on a terminal), VT, FF, NEL, ... none reaches the terminal; only a newline stays one in
    `literal`, and a tab becomes spaces."""
    for char in CONTROLS:
        text = f"paid{char}$0"
        if char == "\n":
            assert (literal(text), literal_line(text)) == ("paid\n$0", "paid⏎$0")
        elif char == "\t":
            assert (literal(text), literal_line(text)) == ("paid    $0", "paid $0")
        else:
            assert literal(text) == f"paid{shown_as(char)}$0", repr(char)
            assert literal_line(text) == f"paid{shown_as(char)}$0", repr(char)
    assert literal("paid\r$0") == "paid␍$0" and literal_line("a\rb\vc\fd") == "a␍b␋c␌d"
    assert literal("next\x85line") == "next\\x85line"  # NEL: a newline to some terminals
    assert literal("a\r\r\nb") == "a␍\nb"  # only a CR that ends a line with LF goes
