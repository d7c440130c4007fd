"""Every request option has the bounds of the config key it overrides, checked before
the search costs anything: ``options.prefetch`` of 10⁹ asked the engine for 10⁹
candidates per branch (``kb.prefetch`` in a config is capped at 10,000), 10³⁰ ended in
"kb: OverflowError: int too big to convert". The property test walks every option of
every built-in handler with hostile values: each is refused with a one-line error naming
the option, or is a value its config key accepts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter, ValidationError

from agent_search import SearchConfig, Searcher
from agent_search._builtins import register_builtin_handlers
from agent_search.config import KeywordConfig
from agent_search.db.settings import DBSettings
from agent_search.errors import InputError
from agent_search.kb.settings import KBSettings
from agent_search.registry import parse_options
from agent_search.web._limits import FetchSettings
from agent_search.web.settings import WebSettings

CONFIG_MODELS: dict[str, type[BaseModel]] = {
    "kb": KBSettings, "db": DBSettings, "web": WebSettings, "web.fetch": FetchSettings,
    "keyword": KeywordConfig}
"""Where each config key named by an option lives (``section.key``)."""
OWN_OPTIONS = {("db", "dsl"), ("db", "generate"), ("kb", "wheres"), ("db", "wheres"),
               ("db", "orders"), ("db", "select"), ("web", "sites"), ("web", "time_range")}
"""Options no config key has: a DSL object (bounded in queries, depth and size, then
validated against the schemas before any query), a flag, and the filters, fields, sites
and time range a request names (each bounded by its own type: a list of at most a set
length, a where tree of at most ``MAX_WHERE_CLAUSES`` clauses, a choice)."""


def _searcher(tmp_path: Path) -> Searcher:
    config = SearchConfig(home=tmp_path, db={"url": f"sqlite:///{tmp_path / 'none.db'}"})
    searcher = Searcher(config)
    register_builtin_handlers(searcher.registry, config)
    return searcher


def _models() -> dict[str, type[BaseModel] | None]:
    searcher = Searcher(SearchConfig())
    register_builtin_handlers(searcher.registry, searcher.config)
    return {kind: searcher.registry.options_model(kind) for kind in searcher.registry.types}


MODELS = _models()
OPTIONS = [(kind, model, name) for kind, model in MODELS.items() if model is not None
           for name in model.model_fields]


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_every_handler_declares_the_options_it_reads(kind: str) -> None:
    assert MODELS[kind] is not None, f"the {kind} handler declares no options model"
pytestmark = pytest.mark.anyio


def _config_field(model: type[BaseModel], name: str) -> tuple[Any, str] | None:
    extra = model.model_fields[name].json_schema_extra
    key = extra.get("config_key") if isinstance(extra, dict) else None
    if not isinstance(key, str):
        return None
    section, _, field = key.rpartition(".")
    config_field = CONFIG_MODELS[section].model_fields[field]
    kind = config_field.annotation
    typed = Annotated.__class_getitem__((kind, *config_field.metadata)) \
        if config_field.metadata else kind  # type: ignore[attr-defined]
    return TypeAdapter(typed), key


@pytest.mark.parametrize(("kind", "model", "name"), OPTIONS,
                         ids=[f"{k}.{n}" for k, _, n in OPTIONS])
def test_every_option_is_bounded_by_its_config_key(kind: str, model: type[BaseModel],
                                                   name: str) -> None:
    if (kind, name) in OWN_OPTIONS:
        return
    assert _config_field(model, name) is not None, (
        f"option {kind}.{name} names no config key whose bounds it takes")


hostile = st.one_of(
    st.integers(min_value=-(10**40), max_value=10**40),
    st.sampled_from([0, -1, 10**4 + 1, 10**9, 10**30, 2**63, 2**64]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(), st.none(),
    st.text(max_size=40), st.just("x" * 5000), st.just("\n"),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


@given(option=st.sampled_from(OPTIONS), value=hostile)
def test_an_option_is_refused_or_within_its_config_bounds(
        option: tuple[str, type[BaseModel], str], value: Any) -> None:
    kind, model, name = option
    try:
        parsed = parse_options(model, {name: value})
    except InputError as exc:
        message = str(exc)
        assert message.startswith(f"invalid option {name}") and "\n" not in message
        assert len(message) < 400  # a 5,000-character value is not echoed whole
        return
    got = getattr(parsed, name)
    found = _config_field(model, name)
    if got is None or found is None:
        return
    adapter, key = found
    try:
        adapter.validate_python(got)
    except ValidationError as exc:  # pragma: no cover - the failure this test is for
        raise AssertionError(f"option {kind}.{name}={got!r} passes, {key} would not") from exc


@pytest.mark.parametrize("prefetch", [10**9, 10**30, 10_001, 0])
async def test_a_kb_search_refuses_an_unbounded_prefetch_before_it_runs(
        tmp_path: Path, prefetch: int) -> None:
    searcher = _searcher(tmp_path)
    try:
        result = await searcher.search({"type": "kb", "query": "bees", "options": {
            "collections": ["d"], "prefetch": prefetch}})
    finally:
        await searcher.aclose()
    assert result.error is not None and result.error.startswith("kb: invalid option prefetch")
    assert "OverflowError" not in result.error and not (tmp_path / "kb").exists()


async def test_a_db_option_is_checked_before_the_database(tmp_path: Path) -> None:
    searcher = _searcher(tmp_path)
    try:
        result = await searcher.search({"type": "db", "query": "x",
                                        "options": {"generate": "no", "dsl": None}})
    finally:
        await searcher.aclose()
    # the database file does not exist: an option error means it was never opened
    assert result.error is not None and "invalid option generate" in result.error


_WHERE = {"field": "price", "op": "<", "value": 100}
_DEEP: dict[str, Any] = _WHERE
for _ in range(40):
    _DEEP = {"or": [_DEEP]}


@pytest.mark.parametrize(("dsl", "said"), [
    ({"queries": [{"model": "product", "wheres": [_WHERE]}] * 10_000}, "10000 queries"),
    ({"model": "product", "wheres": [_DEEP]}, "nested deeper than"),
    ({"model": "product", "wheres": [{**_WHERE, "value": "x" * 100_000}]}, "characters as JSON"),
], ids=["queries", "depth", "size"])
async def test_an_explicit_dsl_is_bounded_before_the_database(
        tmp_path: Path, dsl: dict[str, Any], said: str) -> None:
    searcher = _searcher(tmp_path)
    try:
        result = await searcher.search({"type": "db", "query": "x", "options": {"dsl": dsl}})
    finally:
        await searcher.aclose()
    # the database file does not exist: an option error means it was never opened
    assert result.error is not None and result.error.startswith("db: invalid option dsl: ")
    assert said in result.error and len(result.error) < 200
