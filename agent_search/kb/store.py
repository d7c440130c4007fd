"""The knowledge-base store interface, for writing a store of your own.

A store keeps collections of points, each with a dense vector (cosine), a BM25 sparse
vector (dot product with Qdrant's IDF) and a JSON payload, and answers the requests the
kb's retrieval sends (:class:`VectorQuery`, :class:`RescoreQuery`, :class:`FusionQuery`)
under the filters of this module. The package ships two (``kb.store``: ``edge``, Qdrant's
engine in the process; ``qdrant``, a Qdrant server at ``kb.url``); a third is a class
implementing :class:`KBStore`, made known by an entry point in the
``agent_search.kb_stores`` group naming a :class:`StoreType`::

    [project.entry-points."agent_search.kb_stores"]
    mystore = "my_package.store:STORE_TYPE"   # StoreType(open=..., key=...)

and checked by the conformance suite both builtin stores pass,
:class:`agent_search.testing.KBStoreTests`::

    class TestMyStore(KBStoreTests):
        @pytest.fixture
        def store(self, tmp_path):
            s = MyStore(tmp_path)
            yield s
            s.close()

Methods block (the kb calls them from worker threads).
"""

from __future__ import annotations

from agent_search.kb._store import (
    DENSE,
    ENTRY_POINT_GROUP,
    SPARSE,
    STORES,
    CollectionInfo,
    CollectionNotFound,
    CollectionStats,
    Condition,
    FusionQuery,
    Group,
    HasId,
    IndexKind,
    IsEmpty,
    IsNull,
    KBStore,
    Match,
    MatchAny,
    MatchExcept,
    MatchText,
    PointData,
    QuerySpec,
    Range,
    Record,
    Repaired,
    RescoreQuery,
    Scored,
    SparseVec,
    StoreError,
    StoreType,
    VectorQuery,
    to_filter,
)

__all__ = [
    "DENSE",
    "ENTRY_POINT_GROUP",
    "SPARSE",
    "STORES",
    "CollectionInfo",
    "CollectionNotFound",
    "CollectionStats",
    "Condition",
    "FusionQuery",
    "Group",
    "HasId",
    "IndexKind",
    "IsEmpty",
    "IsNull",
    "KBStore",
    "Match",
    "MatchAny",
    "MatchExcept",
    "MatchText",
    "PointData",
    "QuerySpec",
    "Range",
    "Record",
    "Repaired",
    "RescoreQuery",
    "Scored",
    "SparseVec",
    "StoreError",
    "StoreType",
    "VectorQuery",
    "to_filter",
]
