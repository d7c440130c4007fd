"""Where the database's relevance floor comes from: dev questions, in scope and not.

Run: ``.venv/bin/python -m bench.calibrate_db``

The builtin NL → SQL search scores a row ``confidence × match`` (README "What scores
mean"). The default floor ``db.min_score`` must sit under every question the database can
answer and over the partial readings that questions about something else produce
("the best beaches to visit in Portugal" → customers in Portugal) and the readings of
questions that ask what the database does not hold ("Jazz tracks by Zorro Quixote" → every
Jazz track). This script asks the db handler, with no floor, the *dev* questions below —
on Chinook (reflected) and on the sample shop of ``make demo`` — and prints each
question's best score, the lowest in-scope and the highest other score, and the share of
each side a floor keeps.

These questions are not those of ``bench/bench_trust.py`` (its 20 store and 20
out-of-scope questions are the held-out check): the out-of-scope ones here were written to
hit the databases' values on purpose (cities, countries, genres, job titles, companies).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
CHINOOK = ROOT.parent / "shared" / "data" / "chinook" / "Chinook_Sqlite.sqlite"
DEMO_MODELS = ROOT / "assistants" / "demo" / "models"

CHINOOK_IN_SCOPE = [
    "albums by Queen", "tracks in the Jazz genre", "customers in Germany",
    "employees hired after 2003", "invoices from 2022", "invoices in March 2023",
    "tracks by AC/DC", "Iron Maiden albums", "artists with more than 5 albums",
    "the 5 longest tracks", "tracks shorter than 2 minutes", "the playlist called Music",
    "invoices billed to Berlin", "customers who work at Google", "the genre Rock",
    "employees with the title IT Staff", "customers from Sao Paulo",
    "invoices with a total over 15 dollars", "albums with live in the title",
    "the media type MPEG audio file", "tracks on the album Let There Be Rock",
    "customers in Canada", "which artists are called Metallica?",
    "invoices from Oslo over 5 dollars", "employees born before 1960",
    "How many customers live in France?", "tracks composed by Bach",
]
SHOP_IN_SCOPE = [
    "headphones under $100", "laptops by Apex", "products in the computers category",
    "the cheapest tablets", "discontinued products", "products with fewer than 5 in stock",
    "the most expensive products", "Apex products over $300",
]
OUT_OF_SCOPE = [
    "What's the weather in London tomorrow?", "How do I get a driving licence in Germany?",
    "How tall is the Eiffel Tower in Paris?", "Who painted the Mona Lisa?",
    "How many calories are in an apple?", "When does the rock climbing gym open?",
    "How do I learn to play jazz piano?", "What is the capital of Brazil?",
    "Recommend a good book about World War II", "How do I file taxes in Canada?",
    "How do I cook rice in a pressure cooker?", "What are the symptoms of the flu?",
    "How do I reset my router password?", "Cheap flights from Berlin to Rome",
    "How long is the Great Wall of China?", "What metal is best for a wedding ring?",
    "How do I become a sales manager?", "Where is the best coffee in Lisbon?",
    "What's the population of Prague?", "Train times from Oslo to Bergen",
    "Is classical music good for studying?", "How do I pay an invoice from the tax office?",
    "What is the best tablet for reading in the sun?", "How do I clean my headphones?",
]
UNANSWERABLE = [
    "Jazz tracks by Zorro Quixote", "customers in Brazil who own a boat",
    "Rock albums recorded in Antarctica", "invoices from Paris paid in bitcoin",
    "employees in Calgary who speak Klingon", "Metal tracks about dragons and wizards",
    "customers in Germany with a vintage motorcycle", "Latin albums sung by parrots",
]
"""In scope, but asking what the database does not hold: the honest answer is nothing
(not every Jazz track for "Jazz tracks by Zorro Quixote")."""
CHINOOK_MODELS = ["Album", "Artist", "Track", "Genre", "MediaType", "Playlist", "Customer",
                  "Employee", "Invoice"]


async def best_scores(url: str, home: Path, questions: list[str], models: list[str],
                      assistant_dir: Path | None = None) -> dict[str, float]:
    from agent_search import Request
    from agent_search.config import SearchConfig
    from agent_search.context import Context
    from agent_search.db import create_handler

    config = SearchConfig(home=home, db={"url": url})
    handler = create_handler(config, assistant_dir=assistant_dir)
    out = {}
    try:
        for q in questions:
            request = Request(type="db", query=q, limit=10, models=models, min_score=0)
            result = await handler.search(Context(config=config), request)
            out[q] = max((i.score for i in result.items), default=0.0)
    finally:
        await handler.aclose()
    return out


async def run(root: Path) -> tuple[dict[str, float], dict[str, float]]:
    from agent_search.db.sample import create_sample_database_async

    chinook = root / "chinook.sqlite"
    shutil.copy(CHINOOK, chinook)
    shop = root / "shop.sqlite"
    await create_sample_database_async(shop)
    assistant = root / "assistants" / "demo"
    shutil.copytree(DEMO_MODELS, assistant / "models")
    shop_models = ["agents.demo.product", "agents.demo.order"]
    # one handler per database, asked every question it takes part in
    on_chinook = await best_scores(f"sqlite:///{chinook}", root / "h1",
                                   [*CHINOOK_IN_SCOPE, *OUT_OF_SCOPE, *UNANSWERABLE],
                                   CHINOOK_MODELS)
    on_shop = await best_scores(f"sqlite:///{shop}", root / "h2",
                                [*SHOP_IN_SCOPE, *OUT_OF_SCOPE], shop_models, assistant)
    inside = {q: on_chinook[q] for q in CHINOOK_IN_SCOPE} | {
        q: on_shop[q] for q in SHOP_IN_SCOPE}
    outside = {q: max(on_chinook[q], on_shop[q]) for q in OUT_OF_SCOPE} | {
        q: on_chinook[q] for q in UNANSWERABLE}
    return inside, outside


FORMS: dict[str, Callable[[float], float]] = {
    "0.5 + 0.5·u": lambda u: 0.5 + 0.5 * u,
    "u": lambda u: u,
    "u²": lambda u: u * u,
}
"""Candidate shapes of the confidence left when a share ``u`` of the question's content
words was understood (``--compare``)."""


def _use_form(form: Callable[[float], float]) -> None:
    from agent_search.query.nl import _parser as parser

    def factor(dropped: int, content: int) -> float:
        return 1.0 if content <= 0 else form(max(0.0, 1.0 - dropped / content))

    parser.understood_factor = factor


def _separation(inside: dict[str, float], outside: dict[str, float], floor: float) -> str:
    kept_in = sum(s >= floor for s in inside.values()) / len(inside)
    kept_out = sum(s >= floor for s in outside.values()) / len(outside)
    return (f"lowest in scope {min(inside.values()):.3f}, highest other "
            f"{max(outside.values()):.3f}; floor {floor}: keeps {kept_in:.0%} of the "
            f"{len(inside)} in-scope questions and {kept_out:.0%} of the {len(outside)} "
            "out-of-scope or unanswerable ones")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--floor", type=float, default=None,
                        help="the floor to report on (default: db.min_score's default)")
    parser.add_argument("--compare", action="store_true",
                        help="also score the dev questions with each shape of the "
                        "understood-share factor")
    args = parser.parse_args()
    if not CHINOOK.is_file():
        print(f"calibrate_db: needs {CHINOOK}", file=sys.stderr)
        return 2
    from agent_search.config import DEFAULT_MIN_SCORE

    floor = DEFAULT_MIN_SCORE["db"] if args.floor is None else args.floor
    root = Path(tempfile.mkdtemp(prefix="calibrate-db-"))
    try:
        inside, outside = anyio.run(run, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("| dev question | side | best score |\n|---|---|---:|")
    for side, scores in (("in scope", inside), ("out of scope / unanswerable", outside)):
        for q, s in sorted(scores.items(), key=lambda kv: kv[1]):
            print(f"| {q} | {side} | {s:.3f} |")
    print("\nshipped: " + _separation(inside, outside, floor))
    if args.compare:
        for name, form in FORMS.items():
            _use_form(form)
            root = Path(tempfile.mkdtemp(prefix="calibrate-db-"))
            try:
                print(f"{name}: " + _separation(*anyio.run(run, root), floor))
            finally:
                shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
