"""What runs cost: generations priced with genai-prices' bundled table, offline; unknown is
never zero."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from decimal import Decimal

from agentor.engine.events import GENERATION, RUN_END, RUN_START, Event, Usage
from agentor.engine.store.file import FileStore
from agentor.ops.pricing import (
    RunCost,
    cost_of,
    format_cost,
    generation_costs,
    run_cost,
    total_cost,
)
from tests.conftest import ROOT

# A day on which gpt-4o-mini cost $0.15 per million input tokens and $0.60 per million output
# tokens (OpenAI's price list; the table keeps the prices in force at each date).
MAY_2025 = datetime(2025, 5, 1, tzinfo=UTC).timestamp()


def test_a_known_model_is_priced_from_its_usage() -> None:
    cost = cost_of(Usage(1_000_000, 1_000_000, 2_000_000), "gpt-4o-mini", at=MAY_2025)
    assert cost == Decimal("0.75")
    small = cost_of(Usage(1000, 100, 1100), "gpt-4o-mini", "openai", at=MAY_2025)
    assert small == Decimal("0.00021")


def test_an_unknown_model_or_provider_has_no_cost_never_zero() -> None:
    usage = Usage(1000, 100, 1100)
    assert cost_of(usage, "qwen3-local-finetune") is None
    assert cost_of(usage, "offline-demo") is None
    assert cost_of(usage, "gpt-4o-mini", provider="no-such-provider") is None
    assert cost_of(usage, "") is None
    assert cost_of(usage, None) is None


def test_missing_zero_or_corrupt_usage_has_no_cost() -> None:
    assert cost_of(None, "gpt-4o-mini") is None
    assert cost_of(Usage(0, 0, 0), "gpt-4o-mini") is None  # what a server reporting none leaves
    assert cost_of(Usage(-5, 10, 5), "gpt-4o-mini") is None
    assert cost_of(Usage(1000, 0, 1000), "gpt-4o-mini", at=MAY_2025) == Decimal("0.00015")


def test_a_time_no_calendar_has_is_priced_as_of_now() -> None:
    assert cost_of(Usage(1000, 100, 1100), "gpt-4o-mini", at=1e300) is not None
    assert cost_of(Usage(1000, 100, 1100), "gpt-4o-mini", at=float("nan")) is not None


def _run(*generations: Event) -> list[Event]:
    return [
        Event(RUN_START, model="gpt-4o-mini", ts=MAY_2025),
        *generations,
        Event(RUN_END, status="completed", ts=MAY_2025),
    ]


def test_a_run_with_known_unknown_and_missing_usage_is_partly_priced() -> None:
    events = _run(
        Event(GENERATION, turn=1, usage=Usage(1000, 100, 1100), ts=MAY_2025),  # run_start's model
        Event(GENERATION, turn=2, model="my-local-llm", usage=Usage(10, 1, 11), ts=MAY_2025),
        Event(GENERATION, turn=3, model="gpt-4o-mini", ts=MAY_2025),  # no usage recorded
    )
    assert generation_costs(events) == {1: Decimal("0.00021"), 2: None, 3: None}
    cost = run_cost(events)
    assert cost == RunCost(Decimal("0.00021"), priced=1, unpriced=2)
    assert not cost.complete
    assert format_cost(cost) == "≥$0.00021"


def test_a_run_nobody_can_price_shows_a_dash() -> None:
    events = _run(Event(GENERATION, turn=1, model="my-local-llm", usage=Usage(10, 1, 11)))
    cost = run_cost(events)
    assert cost == RunCost(None, priced=0, unpriced=1)
    assert format_cost(cost) == "–"
    assert format_cost(None) == "–"


def test_totals_of_runs_add_what_is_known_and_count_what_is_not() -> None:
    known = RunCost(Decimal("0.5"), 2, 0)
    unknown = RunCost(None, 0, 3)
    assert total_cost([known, unknown, known]) == RunCost(Decimal("1.0"), 4, 3)
    assert total_cost([unknown]) == RunCost(None, 0, 3)
    assert total_cost([]) == RunCost(None, 0, 0)
    assert format_cost(total_cost([known, known])) == "$1.00"


def test_costs_are_shown_for_people() -> None:
    assert format_cost(Decimal("0")) == "$0"
    assert format_cost(Decimal("0.000213")) == "$0.00021"
    assert format_cost(Decimal("0.0123")) == "$0.01"
    assert format_cost(Decimal("1234.5")) == "$1,234.50"


def test_every_sample_run_is_priced_whole() -> None:
    """The samples (runs/, what `make demo` and the screenshots show) name a model the table
    prices, so their cost is money, never "–"."""
    runs = FileStore(ROOT / "runs")
    for run_id in runs.list_runs():
        cost = run_cost(runs.load(run_id))
        assert cost.unpriced == 0 and cost.priced > 0, run_id
        assert cost.total is not None and cost.total > 0, run_id
        assert format_cost(cost).startswith("$"), run_id


# Run in a fresh interpreter in which any attempt to reach the network raises (an audit hook on
# every socket operation), and which records the attempt.
_OFFLINE_CHECK = """
import json, sys
attempts = []
def refuse(event, args):
    if event.startswith(("socket.", "http.client.", "urllib.")):
        attempts.append(event)
        raise OSError("network refused by the test: " + event)
sys.addaudithook(refuse)
import agentor
assert "genai_prices" not in sys.modules, "import agentor must not load the price table"
from agentor.engine.events import Usage
from agentor.ops.pricing import cost_of
assert "genai_prices" not in sys.modules, "importing pricing must not load the price table"
cost = cost_of(Usage(1000, 100, 1100), "claude-sonnet-4-5", at=1761955200.0)
print(json.dumps({"cost": str(cost), "attempts": attempts,
                  "loaded": "genai_prices" in sys.modules}))
"""


def test_prices_come_from_the_bundled_table_with_no_network() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _OFFLINE_CHECK],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["attempts"] == []
    assert out["loaded"] is True
    # claude-sonnet-4-5: $3 per million input tokens, $15 per million output tokens.
    assert Decimal(out["cost"]) == Decimal("0.0045")


def test_the_fast_price_is_the_same_amount_for_every_model_of_the_table() -> None:
    """`fast=True` prices a model whose price is linear in the tokens from its per-token rates:
    the same amount, equal as a number, for every model of every provider of the bundled table
    (tiered ones go the plain way), at several dates, whether priced or not."""
    from genai_prices.data_snapshot import get_snapshot

    stamps = [
        None,
        datetime(2024, 3, 1, tzinfo=UTC).timestamp(),
        MAY_2025,
        datetime(2025, 9, 1, 18, tzinfo=UTC).timestamp(),  # an off-peak hour, for some
    ]
    counts = [(1, 0), (0, 7), (1234, 56), (250_000, 1000), (3_000_000, 1_000_000)]
    compared = 0
    for provider in get_snapshot().providers:
        for model in provider.models:
            for at in stamps:
                for tokens_in, tokens_out in counts:
                    usage = Usage(tokens_in, tokens_out, tokens_in + tokens_out)
                    plain = cost_of(usage, model.id, provider.id, at=at)
                    fast = cost_of(usage, model.id, provider.id, at=at, fast=True)
                    assert (plain is None) == (fast is None), (provider.id, model.id, at)
                    assert plain == fast, (provider.id, model.id, at, usage, plain, fast)
                    compared += plain is not None
    assert compared > 10_000
    events = _run(
        Event(GENERATION, usage=Usage(1000, 100, 1100), ts=MAY_2025),
        Event(GENERATION, model="qwen3-local", usage=Usage(10, 1, 11), ts=MAY_2025),
    )
    plain, fast = run_cost(events), run_cost(events, fast=True)
    assert (fast.total, fast.priced, fast.unpriced) == (plain.total, plain.priced, 1)


def test_the_plain_price_is_genai_prices_own_decimal_for_every_model_of_the_table() -> None:
    """`cost_of` prices from each price's card (`pricing._card`), not by genai-prices'
    `calc_price` every time: the very `Decimal` it gives (digits and exponent), for every model
    of every provider of the bundled table (tiered ones too: the tier a count falls in), at
    several dates, whether priced or not."""
    from genai_prices.data_snapshot import get_snapshot

    from agentor.ops import pricing

    stamps = [
        None,
        datetime(2023, 6, 1, tzinfo=UTC).timestamp(),
        datetime(2024, 3, 1, tzinfo=UTC).timestamp(),
        MAY_2025,
        datetime(2025, 9, 1, 18, tzinfo=UTC).timestamp(),  # an off-peak hour, for some
    ]
    counts = [(1, 0), (0, 7), (1234, 56), (128_001, 3), (250_000, 1000), (3_000_000, 1_000_003)]
    compared = 0
    for provider in get_snapshot().providers:
        for model in provider.models:
            for at in stamps:
                when = pricing._when(at)
                for tokens_in, tokens_out in counts:
                    usage = Usage(tokens_in, tokens_out, tokens_in + tokens_out)
                    carded = cost_of(usage, model.id, provider.id, at=at)
                    plain = pricing._price(model.id, provider.id, tokens_in, tokens_out, when)
                    assert (plain is None) == (carded is None), (provider.id, model.id, at)
                    if plain is not None and carded is not None:
                        assert carded.as_tuple() == plain.as_tuple(), (model.id, at, usage)
                        compared += 1
    assert compared > 10_000
    cards = [card for _, card in pricing._CARDS.values()]
    assert sum(card is not None for card in cards) > 0.9 * len(cards)  # most have one
