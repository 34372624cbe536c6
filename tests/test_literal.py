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
