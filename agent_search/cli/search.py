"""``agent-search search TYPE QUERY`` — run one search and print its Result."""
