"""The help screen's section "Compare and playback": its keys, each with the bindings behind
it (the app's `M` and `P`, and the keys of the two screens they open)."""

from __future__ import annotations

from tui.keys.model import COMPARE_SCREEN, PLAYBACK_SCREEN, SCREEN, Bind, Key

SECTION = (
    "Compare and playback",
    (
        Key(
            "M  n  N",
            "mark a run; M on another compares the two; a fork, none marked: with its "
            "parent; n N: differences",
            Bind(
                SCREEN,
                "M,shift+m",
                "mark_compare",
                "Compare",
                show=False,
                palette=(
                    "Mark or compare",
                    "Mark the selected run, or compare it with the marked run (a fork: "
                    "with its parent)",
                ),
            ),
            Bind(COMPARE_SCREEN, "n", "next_difference", "Next difference"),
            Bind(COMPARE_SCREEN, "N,shift+n", "previous_difference", "Previous difference"),
            Bind(COMPARE_SCREEN, "escape,q", "dismiss", "Back"),
        ),
        Key(
            "P",
            "play the run back at its recorded pace (esc: back)",
            Bind(
                SCREEN,
                "P,shift+p",
                "playback",
                "Playback",
                show=False,
                palette=("Play back", "Replay the selected run's timeline at its recorded pace"),
            ),
            Bind(PLAYBACK_SCREEN, "escape,q", "dismiss", "Back"),
        ),
        Key(
            "space  .  →",
            "playback: pause or go on; one event on",
            Bind(PLAYBACK_SCREEN, "space", "toggle_pause", "Pause"),
            Bind(PLAYBACK_SCREEN, "full_stop,right", "step", "Step"),
        ),
        Key(
            "1  2  0  +  -",
            "playback speed: ×1, ×2, ×10, faster, slower",
            Bind(PLAYBACK_SCREEN, "1", "speed(1)", "×1", show=False),
            Bind(PLAYBACK_SCREEN, "2", "speed(2)", "×2", show=False),
            Bind(PLAYBACK_SCREEN, "0", "speed(10)", "×10", show=False),
            Bind(PLAYBACK_SCREEN, "plus", "faster", "Faster"),
            Bind(PLAYBACK_SCREEN, "minus", "slower", "Slower"),
        ),
    ),
)
