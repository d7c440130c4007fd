"""Lazy package faces: a package names where each public name lives, and the name is
imported on first use (PEP 562 module ``__getattr__``). ``import agent_search`` then costs
next to nothing, and a process (a CLI command, the sandboxed parser) loads only the
modules it uses. The names stay visible to type checkers through each package's
``if TYPE_CHECKING:`` imports."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, home: Mapping[str, str]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose public name ``n`` lives
    in its module ``home[n]`` (a module of the package, or a dotted absolute name for one
    it takes from another package); a name once imported is kept in the package's
    namespace, so the lookup runs once per name."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        where = module if "." in module else f"{package}.{module}"
        value = getattr(importlib.import_module(where), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *home})

    return __getattr__, __dir__
