"""What runs cost: every generation priced from its usage and model.

Prices come from genai-prices (a pydantic project) and its bundled snapshot of providers'
price lists, read from the installed package: nothing is downloaded, ever (its auto-updater,
`UpdatePrices`, is never started). The package takes ~0.3 s to import, so it is imported on
the first price asked for, never by `import agentor`.

Unknown is never zero. A generation has no known cost (`None`) when its model is not in the
table (a local model, a name the table does not know), when the provider named is unknown,
or when it recorded no usage (no `usage`, or zero tokens: what the engine records when the
server reported none). Totals say how many generations they could not price, and
`format_cost` shows a cost that is unknown as "–" and one that is only partly known as
"≥$…".

Pricing a generation through genai-prices' `calc_price` takes ~0.2 ms (it decomposes the usage
into its priced units every time). `cost_of` gives its very `Decimal` in a few µs: each price in
force gets a card once (`_card`: its priced units in genai-prices' order, each unit's count a
linear function of the input and output tokens, learned from genai-prices' own decomposition and
checked against `calc_price` at several counts), and a generation is priced by genai-prices'
per-unit sum from it; a price no card fits (a count not linear, a provider's special case) goes
through `calc_price` every time. A reader that only needs the amount as a number (an experiment's
measures, summed and turned into a float) asks with `fast=True`: a model whose price in force
is linear in the tokens (no tiers: all but a few) is then priced from its per-token rates,
found once by asking genai-prices at a few token counts and checked at another; the amount is
the same, equal as a number, though its `Decimal` may be written with other trailing zeros
(`1.0000000` for `1.0`), which is why an export does not ask for it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from agentor.engine.events import GENERATION, RUN_START, Event, Usage
from agentor.engine.history import event_time

log = logging.getLogger("agentor")

UNKNOWN = "–"  # how a cost nobody knows is shown: never as 0


def cost_of(
    usage: Usage | None,
    model: str | None,
    provider: str | None = None,
    *,
    at: float | None = None,
    fast: bool = False,
) -> Decimal | None:
    """The price in US dollars of one generation that used `usage` on `model`.

    `provider` is a genai-prices provider id ("openai", "anthropic", "google", ...); without
    it the provider is told from the model's name. `at` is when the request was made (epoch
    seconds; default now): a price list in force then is used. None when the cost is not
    known (see the module); never raises for what a log may hold. `fast`: the same amount
    from the model's per-token rates when its price is linear (see the module).
    """
    if usage is None or not isinstance(model, str) or not model:
        return None
    if usage.input_tokens < 0 or usage.output_tokens < 0:
        return None  # not a count of tokens: a corrupt log
    if usage.input_tokens == 0 and usage.output_tokens == 0:
        return None  # no tokens recorded: the server reported no usage
    when = _when(at)
    if fast:
        return _rated(model, provider, usage.input_tokens, usage.output_tokens, when)
    return _exact(model, provider, usage.input_tokens, usage.output_tokens, when)


def _when(at: float | None) -> datetime | None:
    if at is None:
        return None
    try:
        return datetime.fromtimestamp(at, UTC)
    except (ValueError, OverflowError, OSError):  # a time no calendar has: price as of now
        return None


def _price(
    model: str, provider: str | None, input_tokens: int, output_tokens: int, when: datetime | None
) -> Decimal | None:
    from genai_prices import Usage as PriceUsage  # ~0.3 s: only when a price is asked for
    from genai_prices import calc_price

    usage = PriceUsage(input_tokens=input_tokens, output_tokens=output_tokens)
    try:
        return calc_price(
            usage, model, provider_id=provider, genai_request_timestamp=when
        ).total_price
    except LookupError:
        return None  # the model or the provider is not in the table
    except Exception as exc:
        # A price list is advice: whatever goes wrong inside it must never break reading a run.
        log.debug("no price for %r (provider %r): %s", model, provider, exc)
        return None


# Each price in force's card (`_card`), by (provider, model, the price's identity); the price is
# kept so that its id stays its own.
def _in_force(
    model: str, provider: str | None, when: datetime | None
) -> tuple[tuple[str, str, int], Any] | None:
    """The model's price in force at `when` and the key its worked-out forms are kept under
    (provider id, model id, the price object's id); None when the table has no such model or
    provider. What else genai-prices raises is raised."""
    from genai_prices.data_snapshot import get_snapshot  # ~0.3 s: only when asked

    try:
        found, info = get_snapshot().find_provider_model(model, None, provider, None)
        price = info.get_prices(when or datetime.now(UTC))
    except LookupError:
        return None
    return (found.id, info.id, id(price)), price


_CARDS: dict[tuple[str, str, int], tuple[object, tuple[Any, ...] | None]] = {}
_CHECKS = ((0, 0), (1, 0), (0, 1), (123_457, 98_761), (7, 1_000_003), (999_999, 3))


def _exact(
    model: str, provider: str | None, input_tokens: int, output_tokens: int, when: datetime | None
) -> Decimal | None:
    """`_price`'s very `Decimal` (the same digits and exponent), priced from the card of the
    model's price in force at `when` (`_card`: genai-prices' own per-unit sums, without
    decomposing the usage every time: ~5 µs, not ~0.2 ms); `_price` itself when there is no
    card."""
    try:
        in_force = _in_force(model, provider, when)
    except Exception:  # whatever it is, the plain way meets it and says so
        return _price(model, provider, input_tokens, output_tokens, when)
    if in_force is None:
        return None  # the model or the provider is not in the table
    key, price = in_force
    known = _CARDS.get(key)
    if known is None or known[0] is not price:
        card = None if key[0] == "groq" else _card(model, provider, price, when)
        known = _CARDS[key] = (price, card)
    if known[1] is None:
        return _price(model, provider, input_tokens, output_tokens, when)
    return _on_card(known[1], input_tokens, output_tokens)


def _card(
    model: str, provider: str | None, price: Any, when: datetime | None
) -> tuple[Any, ...] | None:
    """How genai-prices prices `price` (a `ModelPrice`) for input and output tokens: each priced
    unit's price, `per`, and its count as a linear function of the two (found from its own
    decomposition at three points), in its order; None unless the card prices every point of
    `_CHECKS` to `_price`'s very `Decimal` (or something in genai-prices is not as read)."""
    try:
        from genai_prices import Usage as PriceUsage
        from genai_prices.types import (
            TieredPrices,
            Usage,
            _collect_resolved_model_prices,
            _compute_registry_priced_counts,
            calc_unit_price,
        )
        from genai_prices.units import _get_registry

        resolved = _collect_resolved_model_prices(price, _get_registry())
        at = [
            _compute_registry_priced_counts(
                resolved, Usage.from_raw(PriceUsage(input_tokens=a, output_tokens=b))
            )
            for a, b in _CHECKS[:3]
        ]
        units: list[tuple[Any, int, tuple[int, int, int] | None]] = []
        for unit, value in resolved:
            zero, one_in, one_out = (counts.get(unit.usage_key) for counts in at)
            if zero is None and one_in is None and one_out is None:
                units.append((calc_unit_price(value, None, 0, unit.per), unit.per, None))
            elif not (type(zero) is int and type(one_in) is int and type(one_out) is int):
                return None
            elif zero == one_in == one_out == 0 and type(value) is Decimal:  # always none
                units.append((calc_unit_price(value, 0, 0, unit.per), unit.per, None))
            else:
                units.append((value, unit.per, (zero, one_in - zero, one_out - zero)))
        tiered = any(isinstance(value, TieredPrices) for _, value in resolved)
        card = (tiered, tuple(units))
        for a, b in _CHECKS:
            expected = _price(model, provider, a, b, when)
            if expected is None or _on_card(card, a, b).as_tuple() != expected.as_tuple():
                return None
    except Exception as exc:  # advice: the plain way is always there
        log.debug("no price card for %r: %s", model, exc)
        return None
    return card


def _on_card(card: tuple[Any, ...], input_tokens: int, output_tokens: int) -> Decimal:
    """`ModelPrice.calc_price`'s total, its sums in its order, from a `_card`: each unit's
    `calc_unit_price` (a count none or always 0 of a plain price: its term, once for all)."""
    from genai_prices.types import calc_unit_price

    tiered, units = card
    total_input = input_tokens if tiered else 0
    total = Decimal(0)
    for value, per, linear in units:
        if linear is None:
            total += value  # the unit's term, the same at any count
        elif type(value) is Decimal:  # `calc_unit_price` of a plain price, step for step
            count = linear[0] + linear[1] * input_tokens + linear[2] * output_tokens
            total += value * Decimal(count) / per
        else:
            count = linear[0] + linear[1] * input_tokens + linear[2] * output_tokens
            total += calc_unit_price(value, count, total_input, per)
    return total


# The per-token rates of each price in force that is linear in the tokens (None: it is not),
# by (provider, model, the price's identity); the price is kept so that its id stays its own.
_RATES: dict[tuple[str, str, int], tuple[object, tuple[Decimal, Decimal, Decimal] | None]] = {}
_PROBE = (123_457, 98_761)  # where a price found linear is checked


def _rated(
    model: str, provider: str | None, input_tokens: int, output_tokens: int, when: datetime | None
) -> Decimal | None:
    """`_price`'s amount (equal as a number) from the per-token rates of the model's price in
    force at `when`, when it is linear in the tokens; else `_price` itself."""
    from genai_prices.types import TieredPrices

    try:
        in_force = _in_force(model, provider, when)
    except Exception:  # whatever it is, the plain way meets it and says so
        return _price(model, provider, input_tokens, output_tokens, when)
    if in_force is None:
        return None  # the model or the provider is not in the table
    key, price = in_force
    known = _RATES.get(key)
    if known is None or known[0] is not price:
        linear = not any(isinstance(v, TieredPrices) for v in vars(price).values())
        known = (price, _rates(model, provider, when) if linear else None)
        _RATES[key] = known
    rates = known[1]
    if rates is None:
        return _price(model, provider, input_tokens, output_tokens, when)
    fixed, per_input, per_output = rates
    return fixed + per_input * input_tokens + per_output * output_tokens


def _rates(
    model: str, provider: str | None, when: datetime | None
) -> tuple[Decimal, Decimal, Decimal] | None:
    """(a generation's fixed price, a input token's, an output token's) as genai-prices
    prices them at `when`; None unless a fourth count is priced as they say (not linear)."""
    fixed = _price(model, provider, 0, 0, when)
    one_in = _price(model, provider, 1, 0, when)
    one_out = _price(model, provider, 0, 1, when)
    probe = _price(model, provider, *_PROBE, when)
    if fixed is None or one_in is None or one_out is None or probe is None:
        return None
    per_input, per_output = one_in - fixed, one_out - fixed
    if fixed + per_input * _PROBE[0] + per_output * _PROBE[1] != probe:
        return None
    return fixed, per_input, per_output


def provider_of(model: str | None) -> str | None:
    """The id of the provider the price table knows `model` under ("openai", "anthropic",
    ...); None when the table does not know it (a local model, a made-up name)."""
    if not isinstance(model, str) or not model:
        return None
    return _provider(model)


@functools.cache
def _provider(model: str) -> str | None:
    from genai_prices.data_snapshot import get_snapshot  # ~0.3 s: only when asked

    try:
        provider, _ = get_snapshot().find_provider_model(model, None, None, None)
    except LookupError:
        return None
    except Exception as exc:  # advice, as prices are: never breaks reading a run
        log.debug("no provider for %r: %s", model, exc)
        return None
    return provider.id


def generation_costs(
    events: Sequence[Event], provider: str | None = None, *, fast: bool = False
) -> dict[int, Decimal | None]:
    """The cost of each generation of a run, by its index in `events` (`fast`: see the
    module).

    A generation that names no model is priced with its segment's model (the `run_start`'s),
    as upstream Agentor's logs and the engine's own agree on it.
    """
    out: dict[int, Decimal | None] = {}
    segment_model: str | None = None
    for i, e in enumerate(events):
        if e.type == RUN_START:
            segment_model = e.model
        elif e.type == GENERATION:
            model = e.model or segment_model
            out[i] = cost_of(e.usage, model, provider, at=event_time(e), fast=fast)
    return out


@dataclass(frozen=True)
class RunCost:
    """What a run (or a list of runs, added up) cost: `total` of the generations priced.

    `total` is None when no generation could be priced; `unpriced` counts the generations whose
    cost is unknown, so a total is whole only when it is 0 (`complete`).
    """

    total: Decimal | None = None
    priced: int = 0
    unpriced: int = 0

    @property
    def complete(self) -> bool:
        return self.unpriced == 0

    def __add__(self, other: RunCost) -> RunCost:
        if self.total is None:
            total = other.total
        elif other.total is None:
            total = self.total
        else:
            total = self.total + other.total
        return RunCost(total, self.priced + other.priced, self.unpriced + other.unpriced)

    @classmethod
    def of(cls, costs: Iterable[Decimal | None]) -> RunCost:
        total: Decimal | None = None
        priced = unpriced = 0
        for cost in costs:
            if cost is None:
                unpriced += 1
            else:
                priced += 1
                total = cost if total is None else total + cost
        return cls(total, priced, unpriced)


def run_cost(
    events: Sequence[Event], provider: str | None = None, *, fast: bool = False
) -> RunCost:
    """What a run cost: every generation of every segment (see `generation_costs`)."""
    return RunCost.of(generation_costs(events, provider, fast=fast).values())


def total_cost(costs: Iterable[RunCost]) -> RunCost:
    """The runs' costs added up (the filtered list's total)."""
    out = RunCost()
    for cost in costs:
        out = out + cost
    return out


def format_cost(value: Decimal | RunCost | None) -> str:
    """A cost for people: "$0.0021", "$1.25"; "–" when unknown; "≥$0.0021" when only part of
    it is known (some generations could not be priced)."""
    if isinstance(value, RunCost):
        if value.total is None:
            return UNKNOWN
        prefix = "" if value.complete else "≥"
        return prefix + _dollars(value.total)
    if value is None:
        return UNKNOWN
    return _dollars(value)


def _dollars(amount: Decimal) -> str:
    if amount == 0:
        return "$0"
    if abs(amount) >= Decimal("0.01"):
        return f"${amount:,.2f}"
    # Small amounts (a generation costs fractions of a cent): two significant digits.
    digits = -amount.adjusted() + 1
    return f"${amount:.{digits}f}"
