"""A small sample shop database (products and orders) and its model definitions, for the
demo and for tests: ``make demo`` builds it without any outside data.

``products`` is a public catalogue; ``orders`` carries Yao's permission columns
(``__yao_created_by``, ``__yao_team_id``, ``public``, ``share``), so the demo shows
permission-aware search: users ``u1``–``u3`` in teams ``t1``/``t2``.

Run ``python -m agent_search.db.sample PATH_OR_URL [MODELS_DIR]``.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

from agent_search.db._catalog import table_from_definition
from agent_search.db._engine import async_url
from agent_search.db.models import ModelDef

PRODUCT_MODEL: dict[str, Any] = {
    "name": "Product",
    "description": "Products of the sample shop",
    "table": {"name": "products"},
    "columns": [
        {"name": "id", "type": "ID", "label": "ID"},
        {"name": "name", "type": "string", "length": 120, "label": "Name", "index": True},
        {"name": "description", "type": "text", "label": "Description"},
        {"name": "category", "type": "string", "length": 40, "label": "Category",
         "index": True},
        {"name": "brand", "type": "string", "length": 40, "label": "Brand", "index": True},
        {"name": "price", "type": "decimal", "precision": 10, "scale": 2, "label": "Price",
         "unit": "USD", "index": True},
        {"name": "stock", "type": "integer", "label": "Stock", "description": "units in stock"},
        {"name": "status", "type": "enum", "option": ["active", "discontinued"],
         "label": "Status", "index": True},
        {"name": "created_at", "type": "datetime", "label": "Created at"},
    ],
    "relations": {
        "orders": {"type": "hasMany", "model": "order", "key": "product_id", "foreign": "id"},
    },
}

ORDER_MODEL: dict[str, Any] = {
    "name": "Order",
    "description": "Orders of the sample shop (permission-aware)",
    "table": {"name": "orders"},
    "columns": [
        {"name": "id", "type": "ID", "label": "ID"},
        {"name": "product_id", "type": "integer", "label": "Product", "index": True},
        {"name": "customer", "type": "string", "length": 80, "label": "Customer"},
        {"name": "quantity", "type": "integer", "label": "Quantity"},
        {"name": "total", "type": "decimal", "precision": 10, "scale": 2, "label": "Total",
         "unit": "USD"},
        {"name": "status", "type": "enum", "option": ["pending", "paid", "shipped", "cancelled"],
         "label": "Status", "index": True},
        {"name": "created_at", "type": "datetime", "label": "Ordered at", "index": True},
        {"name": "__yao_created_by", "type": "string", "length": 40, "index": True},
        {"name": "__yao_team_id", "type": "string", "length": 40, "index": True},
        {"name": "public", "type": "boolean"},
        {"name": "share", "type": "enum", "option": ["private", "team"]},
    ],
    "relations": {
        "product": {"type": "hasOne", "model": "product", "key": "id", "foreign": "product_id"},
    },
}

SAMPLE_MODELS: dict[str, dict[str, Any]] = {"product": PRODUCT_MODEL, "order": ORDER_MODEL}

_PRODUCTS: list[tuple[str, str, str, float, str]] = [
    # name, category, brand, price, description
    ("Wireless Headphones WH-100", "audio", "Sonora", 79.99,
     "Over-ear Bluetooth headphones with 30 hours of battery and noise cancelling."),
    ("Studio Headphones Pro", "audio", "Sonora", 149.00,
     "Closed-back monitoring headphones for mixing and recording."),
    ("Earbuds Mini", "audio", "Pulse", 39.50, "True wireless earbuds with a pocket case."),
    ("Bluetooth Speaker Go", "audio", "Pulse", 59.00, "Waterproof portable speaker."),
    ("Soundbar 300", "audio", "Sonora", 229.00, "Three-channel soundbar with wireless sub."),
    ("Turntable Classic", "audio", "Vinyl & Co", 189.00, "Belt-drive record player."),
    ("4K Monitor 27", "displays", "Clarity", 329.00, "27-inch 4K IPS monitor, USB-C."),
    ("Gaming Monitor 24", "displays", "Clarity", 199.00, "24-inch 165 Hz monitor."),
    ("Portable Monitor 15", "displays", "Nomad", 149.99, "15-inch USB-C travel screen."),
    ("Mechanical Keyboard K2", "accessories", "Keyforge", 89.00,
     "Hot-swappable mechanical keyboard with brown switches."),
    ("Wireless Mouse M5", "accessories", "Keyforge", 29.99, "Silent ergonomic mouse."),
    ("USB-C Hub 7-in-1", "accessories", "Nomad", 45.00, "HDMI, SD card and three USB ports."),
    ("Laptop Stand", "accessories", "Nomad", 35.00, "Aluminium stand, adjustable height."),
    ("Webcam HD", "accessories", "Clarity", 59.99, "1080p webcam with stereo microphones."),
    ("Ultrabook 13", "computers", "Apex", 999.00, "13-inch laptop, 16 GB RAM, 512 GB SSD."),
    ("Workstation 16", "computers", "Apex", 1899.00, "16-inch laptop for creators."),
    ("Mini PC", "computers", "Nomad", 449.00, "Compact desktop with 8 cores."),
    ("Tablet 11", "computers", "Apex", 499.00, "11-inch tablet with pen support."),
    ("E-Reader Paper", "computers", "Inkwell", 129.00, "Glare-free 7-inch e-ink reader."),
    ("Smartwatch S", "wearables", "Pulse", 199.00, "Fitness tracking and notifications."),
    ("Fitness Band", "wearables", "Pulse", 49.00, "Step, sleep and heart-rate tracking."),
    ("Action Camera", "cameras", "Clarity", 279.00, "4K action camera, waterproof case."),
    ("Mirrorless Camera X", "cameras", "Optica", 1099.00, "24 MP mirrorless body."),
    ("Travel Tripod", "cameras", "Optica", 69.00, "Carbon tripod, 1.2 kg."),
    ("Charging Cable 2m", "accessories", "Keyforge", 9.99, "Braided USB-C cable."),
    ("Power Bank 20000", "accessories", "Pulse", 42.00, "20000 mAh, 65 W USB-C output."),
    ("Noise Cancelling Earbuds", "audio", "Sonora", 129.00,
     "In-ear buds with adaptive noise cancelling."),
    ("Desk Lamp LED", "home", "Lumen", 34.00, "Dimmable lamp with USB charging port."),
    ("Smart Plug", "home", "Lumen", 15.00, "Wi-Fi plug with energy monitoring."),
    ("Robot Vacuum", "home", "Lumen", 349.00, "Vacuum with lidar mapping."),
]

USERS: dict[str, str] = {"u1": "t1", "u2": "t1", "u3": "t2"}
"""Sample users and their teams."""


def _product_rows() -> list[dict[str, Any]]:
    start = dt.datetime(2024, 1, 1, 9, 0, 0)
    rows = []
    for i, (name, category, brand, price, description) in enumerate(_PRODUCTS, start=1):
        rows.append({
            "id": i, "name": name, "description": description, "category": category,
            "brand": brand, "price": Decimal(f"{price:.2f}"), "stock": (i * 37) % 120,
            "status": "discontinued" if i % 11 == 0 else "active",
            "created_at": start + dt.timedelta(days=i * 9),
        })
    return rows


def _order_rows(products: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rng = random.Random(20240101)
    customers = ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger Dijkstra",
                 "Barbara Liskov", "Donald Knuth", "Margaret Hamilton", "Ken Thompson"]
    statuses = ["pending", "paid", "shipped", "shipped", "cancelled"]
    start = dt.datetime(2025, 1, 3, 10, 0, 0)
    rows = []
    for i in range(1, 61):
        product = products[rng.randrange(len(products))]
        quantity = rng.randint(1, 4)
        user = ("u1", "u2", "u3")[i % 3]
        rows.append({
            "id": i, "product_id": product["id"], "customer": rng.choice(customers),
            "quantity": quantity, "total": product["price"] * quantity,
            "status": rng.choice(statuses), "created_at": start + dt.timedelta(days=i * 5),
            "__yao_created_by": user, "__yao_team_id": USERS[user],
            "public": i % 10 == 0, "share": "team" if i % 2 == 0 else "private",
        })
    return rows


def write_model_files(models_dir: str | Path) -> list[Path]:
    """Write ``product.mod.yao`` and ``order.mod.yao`` into ``models_dir``."""
    target = Path(models_dir)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in SAMPLE_MODELS.items():
        path = target / f"{name}.mod.yao"
        path.write_text(json.dumps(model, indent=2, ensure_ascii=False) + "\n",
                        encoding="utf-8")
        written.append(path)
    return written


async def create_sample_database_async(url_or_path: str | Path) -> None:
    """Create (or replace) the ``products`` and ``orders`` tables and fill them."""
    url = async_url(url_or_path)
    if url.get_backend_name() == "sqlite" and url.database:
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    meta = sa.MetaData()
    tables = {name: table_from_definition(ModelDef.model_validate(model), meta)
              for name, model in SAMPLE_MODELS.items()}
    products = _product_rows()
    engine = create_async_engine(url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(meta.drop_all)
            await conn.run_sync(meta.create_all)
            await conn.execute(tables["product"].insert(), products)
            await conn.execute(tables["order"].insert(), _order_rows(products))
            await conn.run_sync(_create_indexes, tables)
    finally:
        await engine.dispose()


def _create_indexes(sync_conn: sa.Connection, tables: dict[str, sa.Table]) -> None:
    indexed = {"product": ("category", "brand", "price", "status"),
               "order": ("product_id", "status", "created_at", "__yao_created_by",
                         "__yao_team_id")}
    for name, cols in indexed.items():
        table = tables[name]
        for col in cols:
            sa.Index(f"ix_{table.name}_{col.strip('_')}", table.c[col]).create(sync_conn)


def create_sample_database(url_or_path: str | Path, *,
                           models_dir: str | Path | None = None) -> None:
    """Synchronous entry point (for ``make demo`` and scripts): build the database and,
    if ``models_dir`` is given, write its model definitions there."""
    anyio.run(create_sample_database_async, url_or_path)
    if models_dir is not None:
        write_model_files(models_dir)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or len(args) > 2:
        print("usage: python -m agent_search.db.sample PATH_OR_URL [MODELS_DIR]",
              file=sys.stderr)
        return 2
    create_sample_database(args[0], models_dir=args[1] if len(args) > 1 else None)
    print(f"sample database written to {args[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
