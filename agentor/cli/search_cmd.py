"""`agentor search [DIR|DSN] QUERY [--regex] [--json]` (agentor.ops.run_search).

One hit a line: `RUN:LINE  TYPE  FIELD  SNIPPET`, LINE being the line of the run's log (a
database's: the event's seq, as the TUI numbers it). Snippets come with every control
character made visible (agentor.literal); on a terminal the match is in bold (unless
NO_COLOR is set). `--json` prints a JSON array of hits (`run_id`, `line`, `type`, `field`,
`snippet`, `start`, `end`: the match is `snippet[start:end]`). Exit status as grep's: 0 when
something matched, 1 when nothing did, 2 on any error (a bad regular expression, a store that
cannot be read or does not answer), said in one line on stderr.
"""

from __future__ import annotations

import os
import sys
from argparse import Namespace
from collections.abc import Iterator
from dataclasses import asdict

from agentor.cli.lines import Refusal, UsageError, print_json
from agentor.cli.stores import store_of, store_spec
from agentor.engine.store.matching import Hit
from agentor.errors import PostgresStoreError
from agentor.literal import literal_line
from agentor.ops.run_search import search as find

_BOLD, _PLAIN = "\x1b[1m", "\x1b[0m"


class SearchError(UsageError):
    """Anything that kept the search from being done: exit status 2, as grep's."""


def search(args: Namespace) -> int:
    try:
        store = store_of(args)
        hits = find(store, args.query, regex=args.regex)
        bold = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        found = _print_json(hits) if args.json else _print_lines(hits, bold)
    except BrokenPipeError:
        raise  # `agentor search ... | head`: main says nothing of it
    except Refusal as exc:  # a store that cannot be used
        raise SearchError(str(exc)) from None
    except ValueError as exc:  # the query
        raise SearchError(str(exc)) from None
    except PostgresStoreError as exc:  # a database that stopped answering
        raise SearchError(str(exc)) from None
    except OSError as exc:  # a directory that cannot be read
        raise SearchError(f"cannot search {store_spec(args)}: {exc.strerror or exc}") from None
    return 0 if found else 1


def _print_lines(hits: Iterator[Hit], bold: bool) -> int:
    n = 0
    for h in hits:
        s = h.snippet
        if bold:
            s = f"{s[: h.start]}{_BOLD}{s[h.start : h.end]}{_PLAIN}{s[h.end :]}"
        print(f"{h.run_id}:{h.line}  {literal_line(h.type)}  {literal_line(h.field)}  {s}")
        n += 1
    return n


def _print_json(hits: Iterator[Hit]) -> int:
    found = [asdict(h) for h in hits]
    print_json(found)
    return len(found)
