"""``agent-search kb repair NAME`` — rebuild a collection's statistics from its points.

Ingest and removal keep a collection's statistics (document frequencies, moments,
postings: what the hybrid's calibration and the floors read) up to date write by write,
and a write that died before saving them is detected and repaired on the next read. This
command is the full rebuild on demand: after restoring a store from a backup, after
writing points by other means, or to check that nothing drifted.
"""

from __future__ import annotations

from typing import Annotated

import anyio
import typer

from agent_search.cli.app import console, fail, print_json
from agent_search.cli.kb import ConfigOpt, JsonOpt, _config, _store_failed, kb_app


@kb_app.command("repair")
def repair(name: Annotated[str, typer.Argument(help="Collection whose statistics to rebuild.")],
           config_dir: ConfigOpt = None, json_out: JsonOpt = False) -> None:
    """Rebuild a collection's statistics (what hybrid search and the floors read) from
    every point: ingest keeps them up to date, so this is a repair."""
    from agent_search.kb import CollectionNotFound, StoreError
    from agent_search.kb._manage import repair_collection

    config = _config(config_dir)
    try:
        done = anyio.run(lambda: repair_collection(config, name))
    except ValueError as exc:
        fail(str(exc))
    except CollectionNotFound as exc:
        fail(str(exc), 2)
    except StoreError as exc:
        _store_failed(exc)
    if json_out:
        print_json(done)
    else:
        console.print(f"{name}: statistics rebuilt from {done['points']} chunks "
                      f"({done['terms']} terms) in {done['seconds']:.2f} s",
                      highlight=False, markup=False)

