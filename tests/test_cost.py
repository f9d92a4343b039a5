"""Price book loading, the typical price per card and currency, and job costs."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.settings import apply_to_core, load_settings
from core.cost import PriceBookError, currency_for, job_cost, load_price_book, use_price_file
from core.query import Currency

OPERATOR_FILE = """
[meta]
name = "Acme GPU cloud (operator list)"
date = 2026-10-01
usd_to_cny = 7.0

[[price]]
card = "rtx-4090"
provider = "Acme"
region = "cn-shanghai"
cny_per_hour = 2.10
billing = "on-demand"
date = 2026-10-01
source = "Acme price sheet"

[[price]]
card = "h100-sxm"
provider = "Acme US"
region = "us-west"
usd_per_hour = 2.00
date = 2026-09-30
source = "Acme price sheet"
"""


def test_default_book_loads_and_names_itself() -> None:
    book = load_price_book()
    assert book.owner
    assert book.meta.usd_to_cny > 1
    assert "h100-sxm" in book.by_card


def test_cny_prefers_chinese_providers() -> None:
    price = load_price_book().price_for("rtx-4090", Currency.CNY)
    assert price is not None
    assert price.market == "cn" and price.provider == "AutoDL"
    assert price.currency is Currency.CNY
    assert price.low <= price.per_hour <= price.high


def test_usd_prefers_providers_abroad_and_on_demand() -> None:
    price = load_price_book().price_for("h100-sxm", Currency.USD)
    assert price is not None
    assert price.market == "global" and price.billing == "on-demand"
    assert price.samples >= 3
    assert isinstance(price.date, dt.date)


def test_falls_back_to_other_market_and_billing() -> None:
    book = load_price_book()
    l20 = book.price_for("l20", Currency.USD)  # only Chinese providers list it
    assert l20 is not None and l20.market == "cn"
    l40 = book.price_for("l40", "USD")  # only a spot price
    assert l40 is not None and l40.billing == "spot"
    assert book.price_for("no-such-card", Currency.USD) is None


def test_currency_choice() -> None:
    assert currency_for(None, "zh") is Currency.CNY
    assert currency_for(None, "en") is Currency.USD
    assert currency_for(None, None) is Currency.USD
    assert currency_for(Currency.USD, "zh") is Currency.USD


@pytest.fixture
def price_file_setting() -> Iterator[None]:
    """Tests below change the price file in force; the next test sees data/prices.toml again."""
    yield
    use_price_file(None)


def test_operator_file_from_dotenv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, price_file_setting: None
) -> None:
    """GPUFIT_PRICES in .env reaches core through the settings (core itself reads no environment)."""
    path = tmp_path / "prices.toml"
    path.write_text(OPERATOR_FILE, encoding="utf-8")
    monkeypatch.delenv("GPUFIT_PRICES", raising=False)
    dotenv = tmp_path / ".env"
    dotenv.write_text(f"GPUFIT_PRICES={path}\n", encoding="utf-8")
    apply_to_core(load_settings(dotenv=dotenv, require_token=False))
    book = load_price_book()
    assert book.owner == "Acme GPU cloud (operator list)"
    cny = book.price_for("rtx-4090", Currency.CNY)
    assert cny is not None and cny.per_hour == 2.10 and not cny.converted
    usd = book.price_for("rtx-4090", Currency.USD)
    assert usd is not None and usd.per_hour == pytest.approx(0.3) and usd.converted
    h100 = book.price_for("h100-sxm", Currency.CNY)
    assert h100 is not None and h100.per_hour == pytest.approx(14.0)


def test_core_ignores_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, price_file_setting: None
) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(OPERATOR_FILE, encoding="utf-8")
    monkeypatch.setenv("GPUFIT_PRICES", str(path))
    assert load_price_book().owner != "Acme GPU cloud (operator list)"


def test_bad_operator_file_is_a_clear_error(tmp_path: Path, price_file_setting: None) -> None:
    path = tmp_path / "bad.toml"
    meta = '[meta]\nname = "x"\ndate = 2026-01-01\nusd_to_cny = 7\n'
    path.write_text(meta + '[[price]]\ncard = "t4"\nprovider = "p"\ndate = 2026-01-01\n')
    use_price_file(path)
    with pytest.raises(PriceBookError, match="neither"):
        load_price_book()
    use_price_file(tmp_path / "missing.toml")
    with pytest.raises(PriceBookError, match="not found"):
        load_price_book()


def test_job_cost() -> None:
    price = load_price_book().price_for("h100-sxm", Currency.USD)
    assert price is not None
    cost = job_cost(price, 8, tokens_per_s=1000.0, hours=10.0)
    assert cost.per_hour == pytest.approx(price.per_hour * 8, rel=1e-3)
    assert cost.total == pytest.approx(cost.per_hour * 10, rel=1e-3)
    assert cost.per_million_tokens == pytest.approx(cost.per_hour / 3.6, rel=1e-3)


def test_every_price_has_a_source_and_a_date() -> None:
    """Issue 19: a price without its source and date is not shown to anyone; the shipped book has none."""
    book = load_price_book()
    for row in book.rows:
        assert row.source.strip(), (row.card, row.provider, row.billing)
        assert row.date <= dt.date(2027, 1, 1), (row.card, row.provider)
        assert row.date_precision in ("day", "month", "quarter", "year", "undated"), row


def test_term_rows_are_priced_by_the_term_and_never_as_the_hourly_price() -> None:
    """包月 ¥1,052 is a month's price (¥1.46/h only at full use): the typical hourly price stays on-demand."""
    book = load_price_book()
    monthly = [r for r in book.by_card["rtx-4090"] if r.billing == "monthly" and r.provider == "AutoDL"]
    assert monthly and monthly[0].per_term(Currency.CNY, book.meta.usd_to_cny) == 1052
    assert monthly[0].cny_per_hour == round(1052 / 720, 4)
    typical = book.price_for("rtx-4090", Currency.CNY)
    assert typical is not None and typical.billing == "on-demand"


def test_a_named_platform_restricts_the_prices() -> None:
    from core.platforms import platform

    book = load_price_book()
    autodl, lambda_ = platform("autodl"), platform("lambda")
    assert autodl is not None and lambda_ is not None
    price = book.price_for("rtx-4090", Currency.USD, autodl)
    assert price is not None and price.provider == "AutoDL"
    assert book.price_for("rtx-4090", Currency.USD, lambda_) is None
    assert not book.sells(lambda_, "rtx-4090") and book.sells(autodl, "rtx-5090")


def test_a_term_row_needs_its_term_price(tmp_path: Path) -> None:
    bad = tmp_path / "prices.toml"
    bad.write_text(
        '[meta]\nname = "x"\ndate = 2026-01-01\nusd_to_cny = 7.0\n\n'
        '[[price]]\ncard = "rtx-4090"\nprovider = "X"\ncny_per_hour = 1.0\nbilling = "monthly"\n'
        'date = 2026-01-01\nsource = "s"\n'
    )
    use_price_file(bad)
    try:
        with pytest.raises(PriceBookError, match="per_term"):
            load_price_book()
    finally:
        use_price_file(None)
