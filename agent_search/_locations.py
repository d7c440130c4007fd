"""Where the configuration, the assistants and the data live — wherever a command runs.

Commands used to look for ``config/``, ``assistants/`` and ``.agent_search`` in the current
directory, so ``--assistant demo`` failed from a sub-folder and ``kb list`` left a stray
``.agent_search`` wherever it ran. The rules now, like git's search for ``.git``:

- **project root**: the first folder, walking up from the current directory, that holds a
  ``config/`` folder with ``search.yao`` or ``agent.yml``, or an ``assistants/`` folder;
- **configuration folder**: ``--config``, else ``$AGENT_SEARCH_CONFIG``, else ``config/``
  in the project root (when it exists);
- **assistants folder**: ``--assistants``, else ``$AGENT_SEARCH_ASSISTANTS``, else
  ``assistants/`` beside the configuration folder (in the project root);
- **data home**: ``$AGENT_SEARCH_HOME``, else ``.agent_search`` in the project root, else
  a per-user data folder (``$XDG_DATA_HOME/agent-search``, default
  ``~/.local/share/agent-search``) — never a folder in whatever directory a command ran in.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_CONFIG = "AGENT_SEARCH_CONFIG"
ENV_ASSISTANTS = "AGENT_SEARCH_ASSISTANTS"
ENV_HOME = "AGENT_SEARCH_HOME"

_CONFIG_MARKERS = ("search.yao", "agent.yml")


def project_root(start: Path | None = None) -> Path | None:
    """The nearest folder, from ``start`` (default: the current directory) upwards, with a
    ``config/`` holding a configuration file or an ``assistants/`` folder."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "assistants").is_dir() or any(
                (folder / "config" / marker).is_file() for marker in _CONFIG_MARKERS):
            return folder
    return None


def find_config_dir(start: Path | None = None) -> Path | None:
    """``$AGENT_SEARCH_CONFIG``, else ``config/`` in the project root; None when there is
    none."""
    env = os.environ.get(ENV_CONFIG)
    if env:
        return Path(env)
    root = project_root(start)
    if root is None or not (root / "config").is_dir():
        return None
    return root / "config"


def find_assistants_dir(config_dir: Path | None = None) -> Path | None:
    """``$AGENT_SEARCH_ASSISTANTS``, else ``assistants/`` beside ``config_dir`` (default:
    the configuration folder found from the current directory)."""
    env = os.environ.get(ENV_ASSISTANTS)
    if env:
        return Path(env)
    root = config_dir.resolve().parent if config_dir is not None else project_root()
    if root is None:
        return None
    candidate = root / "assistants"
    return candidate if candidate.is_dir() else None


def default_home() -> Path:
    """``$AGENT_SEARCH_HOME``, else ``.agent_search`` in the project root, else the
    per-user data folder."""
    env = os.environ.get(ENV_HOME)
    if env:
        return Path(env)
    root = project_root()
    if root is not None:
        return root / ".agent_search"
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "agent-search"
