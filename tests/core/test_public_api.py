"""The public surface: what each package exports (its ``__all__``) is fixed here, so a
change to it is deliberate; every exported name is importable from its package; modules
whose name starts with ``_`` are internal (import from the package root instead)."""

from __future__ import annotations

import importlib

import pytest

EXPORTED: dict[str, list[str]] = {
    "agent_search": [
        "AgentSearchError", "CitationAllocator", "CitationConfig", "ConfigError", "Context",
        "Deps",
        "Event", "EventSink", "GraphNode", "Handler", "InputError", "ListSink", "NullSink",
        "QueryOrder", "QueryWhere", "Registry", "Request", "RerankOptions", "Reranker",
        "Result", "ResultItem", "RunError", "ScoreReranker", "SearchConfig", "Searcher",
        "TraceNode", "build_prompt", "load_config", "span",
    ],
    "agent_search.agent": [
        "AgentSettings", "Assistant", "AssistantPackage", "ChatEvent", "ConnectorSettings",
        "HookContext", "HookResponse", "HookSearch", "LLMError", "OpenAIChatClient",
        "Options", "Reading", "RecordSink", "RecordStore", "SearchRecord", "load_package",
        "offline_answer", "read_conversation", "validate_conversation",
    ],
    "agent_search.db": [
        "ColumnDef", "DBHandler", "DBSettings", "DSLBuildError", "ModelDef", "RelationDef",
        "async_url", "create_handler", "load_definitions",
    ],
    "agent_search.embedding": [
        "CJK_SHARE", "DEFAULT_MODEL", "E5Embedder", "E5_MODEL", "Embedder", "EmbeddingError",
        "EmbeddingSettings", "FastEmbedder", "LocalEmbedder", "MAX_EMBEDDERS", "OFFLINE_MODELS",
        "OpenAIEmbedder", "VectorCache", "Vectors", "choose_model", "cjk_share", "default_workers",
        "embedder_for_collection", "get_embedder", "model_builds", "model_prepared",
        "prepare_e5_dir", "prepare_model_dir", "shipped_embedder",
    ],
    "agent_search.language": [
        "BIG", "CHINESE", "CJK", "CJK_CHAR", "DIGIT", "ENGLISH", "HALF_WIDTH", "HAN", "HANGUL",
        "HANGUL_JAMO", "HAN_CHAR", "KANA", "KANA_LETTERS", "Language", "MAX_RUN", "MAX_VALUE",
        "NUMERALS", "UNIT", "classify",
        "fallback", "fold_width", "jieba_tokenizer", "language_named", "languages",
        "normal_form", "numeral_value", "register_language", "segments", "sentence_breaks",
        "to_simplified", "tokenizer_ready", "unregister_language", "word_share",
    ],
    "agent_search.loader": ["assistant_overrides", "load_config", "searcher_from_config"],
    "agent_search.kb": [
        "Access", "CollectionMismatchError", "CollectionNotFound", "EmbeddingError",
        "IngestReport",
        "KBHandler", "KBSettings", "StoreError", "StoreLockedError", "close_stores",
        "create_handler", "drop_collection", "get_embedder", "ingest_paths",
        "list_collections", "prepare_model_dir",
    ],
    "agent_search.mcp": [
        "MCPConnection", "MCPError", "MCPServerSettings", "MCPServers", "tool_value",
    ],
    "agent_search.mcp.client": [
        "MCPConnection", "MCPError", "MCPServerSettings", "MCPServers", "tool_value",
    ],
    "agent_search.mcp.server": ["SearchTools", "create_server"],
    "agent_search.rerank": [
        "AgentReranker", "MCPReranker", "ModelReranker", "RerankError", "Reranker",
        "ScoreReranker", "apply_rerank", "resolve_reranker",
    ],
    "agent_search.grounding": [
        "Ask", "Budget", "Embed", "GroundedSentence", "SHARED_PAUSE", "STATUSES", "Status",
        "Thresholds", "candidates", "ground", "summary", "unchecked", "verify",
    ],
    "agent_search.server": [
        "ApiKeyEntry", "Identity", "KeyRing", "ServerSettings", "Service", "ServiceOptions",
        "create_app",
    ],
    "agent_search.textsearch": [
        "ANY_FIELD", "BUILTIN_REQUEST_FILTERS", "BingWebPage", "BraveWebResult",
        "DBTextSearch", "DEFAULT_RAG_TEMPLATE", "FilterError", "FilterSupport",
        "FunctionParameter", "GoogleWebPage", "KBTextSearch", "KernelSearchResults",
        "OptionsLike", "PromptTemplate", "RequestFilter", "ResultMapper", "SearXNGResult",
        "SearchFunction", "SearchOptions", "SearchPlugin", "SearcherTextSearch",
        "SerpAPIResult", "SerperResult", "StringMapper", "TavilyResult",
        "TemplateRenderError", "TextSearch", "TextSearchError", "TextSearchFilter",
        "TextSearchResult", "ToolArgumentError", "WebProviderTextSearch", "all_of",
        "any_of", "count_parameter", "create_plugin_with_get_search_results",
        "create_plugin_with_get_text_search_results", "create_plugin_with_text_search",
        "create_search_function", "create_search_plugin", "equal_to",
        "filter_from_arguments", "not_equal_to", "query_parameter", "render_prompt",
        "site_parameter", "skip_parameter", "where",
    ],
    "agent_search.web": [
        "BingProvider", "BraveProvider", "BreakerSettings", "CallBudget", "CircuitOpenError",
        "FetchSettings", "GoogleProvider", "HostPolicy", "HttpProvider", "MCPProvider",
        "MCPSearchServerSettings", "MissingAPIKeyError", "PROVIDER_CLASSES", "Page",
        "ProviderError", "ProviderResponse", "RetrySettings", "SearXNGProvider",
        "SearchParams", "SerpAPIProvider", "SerperProvider", "TavilyProvider",
        "UnsafeURLError", "WebHandler", "WebOptions", "WebProvider", "WebSettings",
        "create_handler", "create_provider", "falls_back", "fetch_pages", "provider_class",
    ],
}
# textsearch keeps one public module per Semantic Kernel concept it mirrors
PUBLIC_MODULES: dict[str, list[str]] = {
    "agent_search": ["agent", "cache", "citation", "cli", "config", "context", "db", "demo",
                     "deps", "embedding", "errors", "events", "grounding", "kb", "language",
                     "loader", "mcp", "query", "registry", "rerank", "research", "searcher",
                     "server", "testing", "textsearch", "trace", "types", "web"],
    "agent_search.agent": ["assistant", "delegation", "llm", "options", "package", "records",
                           "settings"],
    "agent_search.db": ["handler", "models", "sample", "settings"],
    "agent_search.embedding": [],
    "agent_search.grounding": [],
    "agent_search.language": [],
    "agent_search.kb": ["calibrate", "evaluation", "formats", "handler", "ingest", "settings",
                        "store"],
    "agent_search.mcp": ["client", "server"],
    "agent_search.research": [],
    "agent_search.mcp.client": ["settings"],
    "agent_search.mcp.server": [],
    "agent_search.query": ["dsl", "followup", "keyword", "nl", "stopwords"],
    "agent_search.rerank": [],
    "agent_search.testing": ["chat_server"],
    "agent_search.server": ["app", "service", "settings"],
    "agent_search.web": ["errors", "handler", "providers", "settings"],
    "agent_search.web.providers": [],
}


@pytest.mark.parametrize("package", sorted(EXPORTED))
def test_exported_names_are_the_agreed_ones(package: str) -> None:
    module = importlib.import_module(package)
    assert sorted(module.__all__) == EXPORTED[package]
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == []


@pytest.mark.parametrize("package", sorted(PUBLIC_MODULES))
def test_internal_modules_are_underscore_named(package: str) -> None:
    import pkgutil

    module = importlib.import_module(package)
    public = sorted(m.name for m in pkgutil.iter_modules(module.__path__)
                    if not m.name.startswith("_"))
    assert public == PUBLIC_MODULES[package]
