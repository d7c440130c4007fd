"""Which models a question names, as the parser sees them: for readers of a question
other than the parser (a follow-up's reading needs to know whether it names its own
table)."""

from __future__ import annotations

from collections.abc import Sequence

from agent_search.language import normal_form
from agent_search.query.dsl import ModelSchema
from agent_search.query.nl._reading._schema import model_mentions
from agent_search.query.nl._rules._values_zh import names_outside_values


def named_models(query: str, schemas: Sequence[ModelSchema]) -> list[str]:
    """The ids of the models of ``schemas`` that ``query`` names ("cities", "TV
    channels", "high schoolers"), in the order they are first named; a model name inside
    a known value does not count."""
    low = normal_form(query)
    mentions = names_outside_values(low, schemas, model_mentions(low, schemas))
    return [sid for sid, spans in sorted(mentions.items(), key=lambda kv: kv[1][0][0])]
