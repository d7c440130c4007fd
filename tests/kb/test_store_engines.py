"""Both stores on their real engines (Qdrant Edge, and qdrant-client's local mode as the
server's stand-in) run the store conformance suite of :mod:`agent_search.testing` (what
a store of your own runs too); ``kb.store`` picks one from the table of stores, plug-ins
included. Small synthetic points: no model needed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import agent_search.registry as plugin_door
from agent_search import SearchConfig
from agent_search.errors import ConfigError
from agent_search.kb import KBSettings
from agent_search.kb import settings as kb_settings
from agent_search.kb._store import _open, get_store, store_absent
from agent_search.kb._store._edge import EdgeStore
from agent_search.kb._store._filters import FilterError
from agent_search.kb._store._server import ServerStore
from agent_search.kb.store import STORES, KBStore, Match, StoreError, StoreType
from agent_search.testing import KBStoreTests


class TestEdgeStore(KBStoreTests):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[KBStore]:
        s = EdgeStore(tmp_path / "edge")
        yield s
        s.close()


class TestServerStore(KBStoreTests):
    @pytest.fixture
    def store(self) -> Iterator[KBStore]:
        from qdrant_client import QdrantClient

        s = ServerStore(QdrantClient(location=":memory:"), location="memory", local=True)
        yield s
        s.close()


def test_boolean_match_is_refused_on_edge_not_misread(tmp_path: Path) -> None:
    edge = EdgeStore(tmp_path / "e")
    edge.create("c", 4, {"dimensions": 4}, {})
    with pytest.raises(FilterError, match="cannot match a boolean"):
        edge.count("c", Match("meta.flag", True))
    edge.close()


def _settings(**kb: object) -> KBSettings:
    return SearchConfig().merged({"kb": kb}).kb.settings(KBSettings)


def test_kb_store_picks_the_store_and_kb_url_alone_still_means_a_server(
        tmp_path: Path) -> None:
    assert _open.store_name(_settings()) == "edge"
    assert _open.store_name(_settings(url="http://127.0.0.1:9")) == "qdrant"
    assert _open.store_name(_settings(store="Edge", url="http://127.0.0.1:9")) == "edge"
    assert store_absent(_settings(), tmp_path)  # nothing written: nothing opened
    assert not (tmp_path / "kb").exists()
    local = _settings(store="qdrant", url=f"file://{tmp_path / 'server'}")
    assert not store_absent(local, tmp_path)
    store = get_store(local, tmp_path)
    try:
        assert isinstance(store, ServerStore) and get_store(local, tmp_path) is store
    finally:
        _open.close_stores()


def test_a_bad_kb_store_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^kb\.store: unknown store 'mongo'; one of "
                                          r"edge, qdrant$"):
        _settings(store="mongo")  # at load: the settings check the names there are
    with pytest.raises(ConfigError, match=r"^kb\.store: unknown store 'egde'; one of edge, "
                                          r"qdrant — did you mean 'edge'\?$"):
        _settings(store="egde")
    mongo = _settings().model_copy(update={"store": "mongo"})  # settings never checked
    for call in (store_absent, get_store):
        with pytest.raises(StoreError, match=r"^kb\.store: unknown store 'mongo'; one of "
                                             r"edge, qdrant$"):
            call(mongo, tmp_path)
    with pytest.raises(ConfigError, match=r"store 'qdrant' needs url"):
        _settings(store="qdrant")


class _Points:
    """An entry point as a package of yours would declare it."""

    def __init__(self, name: str, value: object) -> None:
        self.name, self.value, self._value = name, "my_package.store:STORE", value

    def load(self) -> object:
        return self._value


def _plugins(monkeypatch: pytest.MonkeyPatch, *points: _Points) -> None:
    def found(group: str) -> tuple[_Points, ...]:
        return points if group == _open.ENTRY_POINT_GROUP else ()

    monkeypatch.setattr(plugin_door, "entry_points", found)
    monkeypatch.setattr(kb_settings, "entry_points", found)  # kb.store is checked at load
    monkeypatch.setattr(_open, "_plugins_read", False)
    monkeypatch.setattr(_open, "STORES", dict(STORES))


def test_an_entry_point_adds_a_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    opened: list[Path] = []

    def open_edge(settings: KBSettings, home: Path) -> KBStore:
        opened.append(home)
        return EdgeStore(home / "mine")

    _plugins(monkeypatch, _Points("mine", StoreType(open_edge, lambda s, home: "mine")))
    settings = _settings(store="mine")  # known at load by its entry point's name alone
    store = get_store(settings, tmp_path)
    try:
        assert opened == [tmp_path] and store.collections() == []
        assert not store_absent(settings, tmp_path)
    finally:
        _open.close_stores()


@pytest.mark.parametrize("point", [_Points("mine", object()),
                                   _Points("edge", StoreType(EdgeStore, str))])
def test_a_bad_store_entry_point_is_a_configuration_error(
        monkeypatch: pytest.MonkeyPatch, point: _Points, tmp_path: Path) -> None:
    _plugins(monkeypatch, point)
    with pytest.raises(ConfigError, match="expected a StoreType under a name not already"):
        store_absent(_settings(store="edge"), tmp_path)
