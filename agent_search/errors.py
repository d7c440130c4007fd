"""The package's exceptions: one hierarchy, split by cause.

::

    AgentSearchError
    ├── InputError (also a ValueError)     bad input or configuration: the caller can fix it
    │   └── ConfigError                    a configuration file or value (names file and key)
    └── RunError (also a RuntimeError)     a run failed: a backend, the network, a model

Searches never raise these at callers: a failed search is a Result whose ``error`` is
one line, ``"<type>: <message>"``. They are raised by set-up (configuration, loading an
assistant, ingest) and by the APIs that document raising (``TextSearch``, the DSL
validator); an error raised at a boundary is chained to its cause (``raise ... from
exc``), so a traceback still shows where it began.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from pydantic import ValidationError


class AgentSearchError(Exception):
    """Base class of the package's own errors."""


class InputError(AgentSearchError, ValueError):
    """Bad input or configuration: a query, filter, option, file or setting the caller
    can fix. The message names what was wrong."""


class RunError(AgentSearchError, RuntimeError):
    """A run failed through no fault of its input: a backend, the network, a model, a
    delegate. Retrying later may work."""


class FilterError(InputError):
    """A filter (``wheres``, a text-search filter) uses a field, operator or value the
    search cannot express. One class for every search that takes filters."""


class ConfigError(InputError):
    """A configuration file or value is wrong. The message names the file, the key and,
    when the key is found in the file, its line; for a key that does not exist, the
    closest one that does (``hint``):
    ``config/search.yao: web.max_resluts: unknown key (line 9) — did you mean
    'max_results'?``"""

    def __init__(self, message: str, *, file: str | None = None, key: str | None = None,
                 line: int | None = None, hint: str | None = None) -> None:
        self.file = file
        self.key = key
        if line is None and file is not None and key is not None:
            from agent_search._config_keys import key_line

            line = key_line(file, key)
        self.line = line
        self.hint = hint
        self.message = message
        where = ": ".join(p for p in (file, key) if p)
        text = f"{where}: {message}" if where else message
        if line is not None:
            text += f" (line {line})"
        if hint:
            text += f" — did you mean {hint!r}?"
        super().__init__(text)

    def located(self, file: str | None, *, prefix: str = "") -> ConfigError:
        """This error naming ``file``, when it does not name one yet (a section checked
        after the layers were merged knows its key, not the file it came from).
        ``prefix`` is where the key sits in that file (``search.`` in a package.yao)."""
        if self.file is not None or file is None:
            return self
        key = f"{prefix}{self.key}" if self.key and prefix else self.key
        return ConfigError(self.message, file=file, key=key, hint=self.hint)


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The one of ``choices`` that ``word`` is a likely typo of, else None (the package's
    one rule, :func:`agent_search._config_keys.did_you_mean`): configuration keys, search
    types, collections, assistants, models, connectors."""
    from agent_search._config_keys import did_you_mean as rule

    return rule(word, choices)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` — did you mean 'docs'?`` for a near miss of one of ``choices``, else ""."""
    hint = closest(word, choices)
    return f" — did you mean {hint!r}?" if hint else ""


def validation_summary(exc: ValidationError, default_loc: str = "request") -> str:
    """``location: message`` of the first validation error, one line, without pydantic's
    "Value error, " prefix: the part of a bad-input message that names what was wrong.
    An error of the whole model has no location: ``default_loc`` stands in (or, when
    empty, the message comes alone). A message that begins with the field's own name
    (``query must not be empty``) is not prefixed with it again."""
    err = exc.errors()[0]
    parts = [str(p) for p in err["loc"]]
    loc = ".".join(parts) or default_loc
    if len(loc) > 80:  # a deeply nested input: its path would swamp the message
        loc = f"{loc[:40]}…{loc[-30:]}"
    msg = str(err["msg"]).removeprefix("Value error, ")
    if parts and msg.startswith(f"{parts[-1]} "):
        return ".".join([*parts[:-1], msg]) if len(loc) <= 80 else msg
    return f"{loc}: {msg}" if loc else msg
