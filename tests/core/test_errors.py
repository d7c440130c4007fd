"""One error hierarchy: every exception class of the package is an AgentSearchError,
split by cause (InputError = bad input or configuration, RunError = a failed run)."""

from __future__ import annotations

import importlib
import pkgutil

import agent_search
from agent_search import AgentSearchError, ConfigError, InputError, RunError
from agent_search.errors import FilterError

# exceptions that are control flow inside one module or HTTP answers of the service,
# never seen by a library user
_INTERNAL = {"_HookFailed", "ApiError", "AuthError"}


def _exception_classes() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(agent_search.__path__, "agent_search."):
        if info.name.startswith(("agent_search.cli", "agent_search.server")) or \
                info.name.endswith("__main__"):
            continue  # command and HTTP layers turn errors into exit codes / responses
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, BaseException)
                    and value.__module__ == info.name and value.__name__ not in _INTERNAL):
                found[f"{info.name}.{value.__name__}"] = value
    return list(found.values())


def test_the_hierarchy() -> None:
    assert issubclass(InputError, ValueError) and issubclass(RunError, RuntimeError)
    assert issubclass(ConfigError, InputError) and issubclass(FilterError, InputError)
    assert not issubclass(InputError, RunError)


def test_one_filter_error_for_every_search() -> None:
    from agent_search.kb._store._filters import FilterError as KBFilterError
    from agent_search.textsearch.filters import FilterError as TextFilterError

    assert KBFilterError is TextFilterError is FilterError


def test_every_exception_class_of_the_package_is_in_the_hierarchy() -> None:
    outside = sorted(f"{c.__module__}.{c.__name__}" for c in _exception_classes()
                     if c is not AgentSearchError and not issubclass(c, (InputError, RunError)))
    assert outside == []
