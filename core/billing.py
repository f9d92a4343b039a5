"""Which billing kind to rent a card on, from how it will be used (issue 19).

A month (包月) bills every hour of the term whether the instance runs or not, so it pays only past a
number of hours a day: the break-even, monthly price ÷ (30 × hourly price). Spot / preemptible capacity is
cheaper but can be reclaimed; reserved capacity is committed in advance. The advice compares the kinds one
provider sells (the platform named, else the card's market), at the hours a day the user said, over a
30-day month or over the days the rental lasts when the user said that ("连续跑两周": 14 days, where a month's
term costs a whole month and an hourly rental only the hours used).
"""

from __future__ import annotations

import datetime as dt
import math

from pydantic import BaseModel, ConfigDict

from core.advisor.fit_advice import card_named
from core.catalog import Card, load_catalog
from core.cost import DAYS_PER_MONTH, TERM_HOURS, PriceBook, PriceRow, price_book_in_force
from core.estimator import UnknownCardError
from core.platforms import Platform, platform
from core.query import BillingKind, Currency, Query

# The kinds compared with on-demand for a card, in the order an answer lists them.
KINDS: tuple[BillingKind, ...] = ("on-demand", "daily", "weekly", "monthly", "spot", "reserved", "serverless")


class BillingOption(BaseModel):
    """One way to rent the card: the price as sold (per hour or per term), a 30-day month at the use said."""

    model_config = ConfigDict(frozen=True)

    kind: BillingKind
    price: float  # per hour for hourly kinds, per term (day / week / month) for term kinds
    per_hour: float  # the hourly figure (a term's price ÷ its hours: the floor at full use)
    term_hours: int | None
    # 30 days (or the rental's days) at `hours_per_day` (a term kind: the terms that cover them)
    month_cost: float | None
    provider: str
    date: dt.date | None  # None: a price the question stated
    source: str
    stale: bool
    stated: bool = False  # the question's own price ('包月950', '$2.5/h on-demand'), not the price list's


class BillingAdvice(BaseModel):
    model_config = ConfigDict(frozen=True)

    card: str
    currency: Currency
    hours_per_day: float | None
    days: float | None  # how long the rental lasts, when said (month_cost is then the cost over these days)
    asked: BillingKind | None
    platform: str | None
    options: list[BillingOption]
    best: BillingOption  # cheapest at the use said; the kind asked about when no use was said
    break_even_hours_per_day: float | None  # `break_even_kind` vs on-demand (None without both)
    # the term the break-even is of: monthly; a weekly or daily term the question asks about or prices when
    # there is no monthly one
    break_even_kind: BillingKind | None = None
    monthly_vs_hourly: (
        tuple[float, float] | None
    )  # (on-demand for a month at the use said, the monthly price)


class BillingAnswer(BaseModel):
    """What a billing answer shows (templates/billing.j2 reads it as `v`): the card, its billing kinds side by
    side, the platform named, the currency and the kind the question asked about."""

    model_config = ConfigDict(frozen=True)

    card: Card
    advice: BillingAdvice | None  # None: no price for the card (or no price list in force)
    platform: Platform | None
    currency: Currency
    asked: BillingKind | None


def billing_for(query: Query) -> BillingAnswer:
    """'autodl 4090 按月租划算还是按小时 我每天就用8小时': the card's billing kinds and the one to take, in
    the query's currency (the answer service gives it the language's when the question names none)."""
    card = card_named(query.card)
    if card is None:
        raise UnknownCardError(query.card or "", load_catalog().closest(query.card or ""))
    currency = query.currency or Currency.USD
    book = price_book_in_force()
    named = platform(query.platform)
    advice = None
    if book is not None:
        advice = billing_advice(
            card.id,
            currency,
            book,
            hours_per_day=query.hours_per_day,
            days=query.rental_days,
            asked=query.billing,
            platform=named,
            stated=_stated_prices(query),
        )
    return BillingAnswer(card=card, advice=advice, platform=named, currency=currency, asked=query.billing)


def _stated_prices(query: Query) -> dict[BillingKind, float]:
    """The prices the question states for a kind ('包月950', '$2.5/h on-demand')."""
    stated: dict[BillingKind, float] = {}
    if query.stated_hourly_price is not None:
        stated["on-demand"] = query.stated_hourly_price
    if query.stated_monthly_price is not None:
        stated["monthly"] = query.stated_monthly_price
    if query.stated_weekly_price is not None:
        stated["weekly"] = query.stated_weekly_price
    if query.stated_daily_price is not None:
        stated["daily"] = query.stated_daily_price
    if query.stated_reserved_price is not None:
        stated["reserved"] = query.stated_reserved_price
    return stated


def _median(rows: list[PriceRow], book: PriceBook, currency: Currency) -> PriceRow:
    fresh = [r for r in rows if not book.is_stale(r.date)] or rows
    rate = book.meta.usd_to_cny
    ranked = sorted(fresh, key=lambda r: (r.per_hour(currency, rate), -r.date.toordinal()))
    return ranked[(len(ranked) - 1) // 2]


def _month_cost(
    kind: BillingKind, price: float, hours_per_day: float | None, days: float | None = None
) -> float | None:
    """A 30-day month at the use said; over `days` when the rental's length is said (whole terms: a
    two-week job on a monthly term pays the month)."""
    if hours_per_day is None:
        return None
    if days is not None:
        terms = {"daily": 1, "weekly": 7, "monthly": DAYS_PER_MONTH}.get(kind)
        if terms is not None:
            return round(price * math.ceil(days / terms - 1e-9), 2)
        return round(price * hours_per_day * days, 2)
    if kind == "daily":
        return round(price * DAYS_PER_MONTH, 2)  # a day is rented for each day used
    if kind == "weekly":
        return round(price * DAYS_PER_MONTH / 7, 2)
    if kind == "monthly":
        return round(price, 2)
    if kind == "reserved":
        return round(price * 24 * DAYS_PER_MONTH, 2)  # a commitment bills every hour of it, on or off
    return round(price * hours_per_day * DAYS_PER_MONTH, 2)


def billing_advice(
    card_id: str,
    currency: Currency,
    book: PriceBook,
    *,
    hours_per_day: float | None = None,
    days: float | None = None,
    asked: BillingKind | None = None,
    platform: Platform | None = None,
    stated: dict[BillingKind, float] | None = None,
) -> BillingAdvice | None:
    """The card's billing kinds side by side and the one to take; None when the book has no price for it
    and the question stated none. A price the question states ('包月950，按量1.58一小时') stands for its kind
    in place of the book's: the user compares the offers in front of them."""
    rows = book.rows_for(card_id, platform)
    if platform is None:
        rows = [r for r in rows if not r.platform_only]
    stated = stated or {}
    if not rows and not stated:
        return None
    preferred = "cn" if currency is Currency.CNY else "global"
    in_market = [r for r in rows if r.market == preferred] or rows
    if stated:
        # the book prices only the kinds the question did not
        in_market = [r for r in in_market if r.billing not in stated]
    # the hourly and the monthly figure from one provider where one sells both (AutoDL's 按量 vs 包月)
    monthly_rows = [r for r in in_market if r.billing == "monthly"]
    anchor = _median(monthly_rows, book, currency).provider if monthly_rows else None
    rate = book.meta.usd_to_cny
    options: list[BillingOption] = []
    for kind in KINDS:
        if kind in stated:
            options.append(_stated_option(kind, stated[kind], hours_per_day, days))
            continue
        of_kind = [r for r in in_market if r.billing == kind]
        if kind == "on-demand" and anchor is not None:
            of_kind = [r for r in of_kind if r.provider == anchor] or of_kind
        if not of_kind:
            continue
        row = _median(of_kind, book, currency)
        term = row.per_term(currency, rate)
        price = term if term is not None else row.per_hour(currency, rate)
        options.append(
            BillingOption(
                kind=kind,
                price=round(price, 4),
                per_hour=round(row.per_hour(currency, rate), 4),
                term_hours=TERM_HOURS.get(kind),
                month_cost=_month_cost(kind, price, hours_per_day, days),
                provider=row.provider,
                date=row.date,
                source=row.source,
                stale=book.is_stale(row.date),
            )
        )
    if not options:
        return None
    by_kind = {o.kind: o for o in options}
    hourly, monthly = by_kind.get("on-demand"), by_kind.get("monthly")
    break_even = None
    vs: tuple[float, float] | None = None
    against = _term_asked_or_stated(by_kind, asked, stated) or monthly
    if hourly is not None and against is not None and hourly.per_hour > 0:
        # a term's price over its days at the hourly rate; a commitment's hourly rate around the clock
        term_days = _TERM_DAYS.get(against.kind)
        committed = against.price / term_days if term_days else against.per_hour * 24
        break_even = round(committed / hourly.per_hour, 1)
    if (
        hourly is not None
        and monthly is not None
        and hourly.per_hour > 0
        and hours_per_day is not None
        and hourly.month_cost is not None
        and monthly.month_cost is not None
    ):
        vs = (hourly.month_cost, monthly.month_cost)
    best = _best(options, by_kind, hours_per_day, asked)
    return BillingAdvice(
        card=card_id,
        currency=currency,
        hours_per_day=hours_per_day,
        days=days,
        asked=asked,
        platform=platform.id if platform is not None else None,
        options=options,
        best=best,
        break_even_hours_per_day=break_even,
        break_even_kind=against.kind if break_even is not None and against is not None else None,
        monthly_vs_hourly=vs,
    )


_TERM_DAYS: dict[BillingKind, float] = {"daily": 1, "weekly": 7, "monthly": DAYS_PER_MONTH}


def _term_asked_or_stated(
    by_kind: dict[BillingKind, BillingOption], asked: BillingKind | None, stated: dict[BillingKind, float]
) -> BillingOption | None:
    """The term the question prices ('包周 800，按量 6 一小时', '换成包天 40 块呢', '包年 9000', 'a 3-month
    commitment at $1.85/h'), else a weekly or daily one it asks about: the offer in front of the user is the
    one weighed, before the price list's monthly term."""
    for kind in ("monthly", "reserved", "weekly", "daily"):
        if kind in by_kind and kind in stated:
            return by_kind[kind]
    for kind in ("weekly", "daily"):
        if kind in by_kind and kind == asked:
            return by_kind[kind]
    return None


def _stated_option(
    kind: BillingKind, price: float, hours_per_day: float | None, days: float | None
) -> BillingOption:
    hours = TERM_HOURS.get(kind)
    return BillingOption(
        kind=kind,
        price=round(price, 4),
        per_hour=round(price / hours if hours else price, 4),
        term_hours=hours,
        month_cost=_month_cost(kind, price, hours_per_day, days),
        provider="",
        date=None,
        source="stated in the question",
        stale=False,
        stated=True,
    )


def _best(
    options: list[BillingOption],
    by_kind: dict[BillingKind, BillingOption],
    hours_per_day: float | None,
    asked: BillingKind | None,
) -> BillingOption:
    """At a stated use, the cheapest kind for a month of it (spot and reserved only when asked about: one can
    be stopped, the other commits months ahead); without a use, the kind asked about, else on-demand."""
    if hours_per_day is None:
        if asked is not None and asked in by_kind:
            return by_kind[asked]
        return by_kind.get("on-demand") or options[0]
    allowed = {"on-demand", "daily", "weekly", "monthly"} | ({asked} if asked else set())
    priced = [o for o in options if o.kind in allowed and o.month_cost is not None]
    if not priced:
        return by_kind.get(asked) if asked and asked in by_kind else options[0]  # type: ignore[return-value]
    return min(priced, key=lambda o: (o.month_cost, KINDS.index(o.kind)))
