"""Query processing: keyword extraction for web search, natural language to QueryDSL for
database search."""
