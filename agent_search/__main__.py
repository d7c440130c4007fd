"""``python -m agent_search`` runs the command line."""

from agent_search.cli import main

main()
