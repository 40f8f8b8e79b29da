"""The flag shop's catalogue, made from packaged data: one product per ISO 3166-1 country.

Pure functions from the data files' text to product records; reading the files and writing the products into
Oscar happen elsewhere (:mod:`capreplay.benchmark.apps.oscar_app` and the import command it writes).

- name and codes: pycountry's bundled iso-codes ``iso3166-1.json`` (alpha-2, alpha-3, numeric, name, official
  and common name where iso-codes has them);
- region (the shop's category): the area, the part before the first ``/``, of the first time zone that tzdata's
  ``zone.tab`` lists for the country. tzdb orders a country's rows geographically with the most populous first,
  so ``US`` is ``America`` (America/New_York), ``ES`` is ``Europe`` (Europe/Madrid), ``RU`` is ``Europe``
  (Europe/Kaliningrad), ``IS`` is ``Atlantic`` (Atlantic/Reykjavik). A country zone.tab does not list (the
  uninhabited ``BV`` and ``HM``) goes to :data:`NO_ZONE`;
- price (in pounds sterling, Oscar's default currency): :data:`BASE_PRICE` plus :data:`PRICE_PER_SUBDIVISION`
  for each of the country's subdivisions in pycountry's ``iso3166-2.json``;
- stock: the ISO numeric code modulo :data:`STOCK_MODULUS` (so a few flags, numeric 100, 250..., are sold out).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

BASE_PRICE = Decimal("4.00")
PRICE_PER_SUBDIVISION = Decimal("0.10")
STOCK_MODULUS = 25
NO_ZONE = "No time zone"
"""The category of a country that tzdata's zone.tab gives no time zone (uninhabited islands)."""


@dataclass(frozen=True)
class FlagProduct:
    """One country's flag as a product of the shop."""

    alpha_2: str
    alpha_3: str
    numeric: str
    iso_name: str
    """The ISO 3166-1 short name as iso-codes spells it (``Korea, Republic of``)."""
    title: str
    """The product's title: iso-codes' common name where it has one (``South Korea``), else the ISO name."""
    official_name: str | None
    region: str
    """The tz area of the country's first time zone (``Europe``), or :data:`NO_ZONE`."""
    time_zone: str | None
    subdivision_types: tuple[tuple[str, int], ...]
    """ISO 3166-2 subdivision types with their counts, most first (ties by name)."""
    price: Decimal
    stock: int

    @property
    def subdivisions(self) -> int:
        """How many ISO 3166-2 subdivisions the country has."""
        return sum(n for _, n in self.subdivision_types)

    @property
    def upc(self) -> str:
        """The product's code in the shop: ``FLAG-`` and the alpha-3 code."""
        return f"FLAG-{self.alpha_3}"


def parse_zone_tab(text: str) -> dict[str, list[str]]:
    """Country code -> its time zones in the order tzdata's ``zone.tab`` lists them."""
    zones: dict[str, list[str]] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        code, _coordinates, zone, *_ = line.split("\t")
        zones.setdefault(code, []).append(zone)
    return zones


def region_of(zones: list[str]) -> str:
    """The area of the first zone (``America`` for ``America/New_York``), or :data:`NO_ZONE` for none."""
    return zones[0].split("/", 1)[0] if zones else NO_ZONE


def subdivision_types(iso3166_2: dict[str, Any]) -> dict[str, Counter[str]]:
    """Country alpha-2 -> how many subdivisions of each type iso-codes' ``iso3166-2.json`` lists for it."""
    counts: dict[str, Counter[str]] = {}
    for entry in iso3166_2["3166-2"]:
        counts.setdefault(entry["code"].split("-", 1)[0], Counter())[entry["type"]] += 1
    return counts


def price_of(subdivisions: int) -> Decimal:
    """The flag's price: the base price plus a fixed amount per ISO 3166-2 subdivision."""
    return BASE_PRICE + PRICE_PER_SUBDIVISION * subdivisions


def stock_of(numeric: str) -> int:
    """The flags in stock: the ISO 3166-1 numeric code modulo :data:`STOCK_MODULUS`."""
    return int(numeric) % STOCK_MODULUS


def flag_products(iso3166_1: dict[str, Any], iso3166_2: dict[str, Any], zone_tab: str) -> list[FlagProduct]:
    """Every country of ``iso3166-1.json`` as a product, sorted by alpha-2 code."""
    zones = parse_zone_tab(zone_tab)
    types = subdivision_types(iso3166_2)
    products = []
    for country in sorted(iso3166_1["3166-1"], key=lambda c: str(c["alpha_2"])):
        code = country["alpha_2"]
        counted = types.get(code, Counter())
        ordered = tuple(sorted(counted.items(), key=lambda item: (-item[1], item[0])))
        own = zones.get(code, [])
        products.append(
            FlagProduct(
                alpha_2=code,
                alpha_3=country["alpha_3"],
                numeric=country["numeric"],
                iso_name=country["name"],
                title=country.get("common_name", country["name"]),
                official_name=country.get("official_name"),
                region=region_of(own),
                time_zone=own[0] if own else None,
                subdivision_types=ordered,
                price=price_of(sum(counted.values())),
                stock=stock_of(country["numeric"]),
            )
        )
    return products


def description(product: FlagProduct, flags_version: str) -> str:
    """The product page's description (HTML): the data behind the product and how price and stock are derived."""
    named = product.official_name or product.iso_name
    if product.time_zone:
        where = (f"Region: {product.region}, the area of {product.time_zone}, the first time zone tzdata's "
                 f"zone.tab lists for {product.alpha_2}.")  # fmt: skip
    else:
        where = f"Region: {NO_ZONE}; tzdata's zone.tab lists no time zone for {product.alpha_2}."
    if product.subdivisions:
        kinds = "; ".join(f"{kind}: {n}" for kind, n in product.subdivision_types)
        parts = f"ISO 3166-2 lists {product.subdivisions} subdivisions of {product.title} ({kinds})."
    else:
        parts = f"ISO 3166-2 lists no subdivisions of {product.title}."
    price = (f"Price: £{BASE_PRICE} plus £{PRICE_PER_SUBDIVISION} for each of its {product.subdivisions} "
             f"subdivisions = £{product.price}.")  # fmt: skip
    stock = f"Stock: the numeric code {product.numeric} modulo {STOCK_MODULUS} = {product.stock} flags."
    return "\n".join(
        [
            f"<p>The flag of {named}, drawn from the 4:3 SVG of flag-icons {flags_version}.</p>",
            f"<p>ISO 3166-1 codes: alpha-2 {product.alpha_2}, alpha-3 {product.alpha_3}, numeric {product.numeric}."
            f" {where}</p>",
            f"<p>{parts}</p>",
            f"<p>{price} {stock}</p>",
        ]
    )


def product_records(products: list[FlagProduct], flags_version: str) -> list[dict[str, Any]]:
    """The products as JSON-ready records for the importer that runs in Oscar's environment."""
    return [
        {
            "upc": p.upc,
            "title": p.title,
            "category": p.region,
            "description": description(p, flags_version),
            "price": str(p.price),
            "stock": p.stock,
            "sku": p.alpha_3,
            "flag": p.alpha_2.lower(),
            "attributes": {
                "alpha_2": p.alpha_2,
                "alpha_3": p.alpha_3,
                "numeric": p.numeric,
                "iso_name": p.iso_name,
                "official_name": p.official_name,
                "time_zone": p.time_zone,
                "subdivisions": p.subdivisions,
            },
        }
        for p in products
    ]


def category_descriptions(products: list[FlagProduct]) -> dict[str, str]:
    """Each category's description (HTML): the rule that put its countries there, and how many there are."""
    counts = Counter(p.region for p in products)
    described = {}
    for region, n in sorted(counts.items()):
        if region == NO_ZONE:
            rule = "tzdata's zone.tab lists no time zone for them (uninhabited islands)"
        else:
            rule = f"the first time zone tzdata's zone.tab lists for them is in the {region} area ({region}/...)"
        described[region] = f"<p>Flags of the {n} countries whose region is {region}: {rule}.</p>"
    return described


def import_files(iso3166_1: str, iso3166_2: str, zone_tab: str, flags_version: str) -> tuple[str, str]:
    """The importer's input from the three data files' text: the product records and the category
    descriptions, each as JSON."""
    products = flag_products(json.loads(iso3166_1), json.loads(iso3166_2), zone_tab)
    records = json.dumps(product_records(products, flags_version), indent=1, ensure_ascii=False)
    return records, json.dumps(category_descriptions(products), indent=1, ensure_ascii=False)
