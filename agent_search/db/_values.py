"""Values from outside (where values, DSL values, filters, tool arguments) as column types.

Every value is bounded *before* it is converted: a number is at most
:data:`MAX_NUMBER_CHARS` characters of ASCII digits (``1e999999`` would make
``int(Decimal(...))`` build a million-digit integer on the event loop), at most
:data:`MAX_SIGNIFICANT_DIGITS` significant digits and an exponent within
±:data:`MAX_EXPONENT`; integers must fit a signed 64-bit column; dates lie in years
1..9999; text is at most :data:`MAX_TEXT_CHARS` characters without NUL. A value that
breaks a bound is a :class:`ValueBoundsError` whose message says which bound, so the
builder can name the field. Nothing here costs more than a few microseconds.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from typing import Any

from agent_search.errors import InputError

MAX_NUMBER_CHARS = 64
MAX_SIGNIFICANT_DIGITS = 30
MAX_EXPONENT = 38
"""|adjusted exponent| of a number: 1e38 is far beyond any amount, count or price."""
INT64_MIN = -(2 ** 63)
INT64_MAX = 2 ** 63 - 1
MAX_TEXT_CHARS = 4_096
MAX_LIKE_CHARS = 256
MAX_LIKE_WILDCARDS = 8
"""``%`` in one pattern: each one multiplies the work of a backtracking LIKE."""
MIN_TIMESTAMP = -62_135_596_800.0  # 0001-01-01T00:00:00Z
MAX_TIMESTAMP = 253_402_300_799.0  # 9999-12-31T23:59:59Z
MAX_DATE_CHARS = 40

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d{1,6})?", re.ASCII)
_TRUE = frozenset({"true", "1", "yes", "y", "on"})
_FALSE = frozenset({"false", "0", "no", "n", "off"})


class ValueBoundsError(InputError):
    """A value from outside is not a bounded value of the wanted type."""


def to_decimal(value: Any) -> decimal.Decimal:
    """A finite, bounded Decimal from an int, float or numeric text (ASCII digits, an
    optional exponent)."""
    if isinstance(value, bool):
        raise ValueBoundsError("a boolean is not a number")
    if isinstance(value, int):
        if value.bit_length() > 127:
            raise ValueBoundsError(f"more than {MAX_SIGNIFICANT_DIGITS} digits")
        number = decimal.Decimal(value)
    elif isinstance(value, float):
        number = decimal.Decimal(repr(_finite(value)))
    elif isinstance(value, str | decimal.Decimal):
        number = _decimal_text(str(value).strip())
    else:
        raise ValueBoundsError(f"a {type(value).__name__} is not a number")
    return _bounded(number)


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueBoundsError("not a finite number")
    return value


def _decimal_text(text: str) -> decimal.Decimal:
    """Numeric text, its length checked before it is read."""
    if len(text) > MAX_NUMBER_CHARS:
        raise ValueBoundsError(f"longer than {MAX_NUMBER_CHARS} characters")
    if not _NUMBER.fullmatch(text):
        raise ValueBoundsError("not a plain decimal number")
    return decimal.Decimal(text)


def _bounded(number: decimal.Decimal) -> decimal.Decimal:
    """``number`` within the digit and exponent bounds (zero as plain 0)."""
    if not number.is_finite():
        raise ValueBoundsError("not a finite number")
    if number.is_zero():
        return decimal.Decimal(0)
    if len(number.as_tuple().digits) > MAX_SIGNIFICANT_DIGITS:
        raise ValueBoundsError(f"more than {MAX_SIGNIFICANT_DIGITS} significant digits")
    if abs(number.adjusted()) > MAX_EXPONENT:
        raise ValueBoundsError(f"magnitude beyond 1e±{MAX_EXPONENT}")
    return number


def to_int(value: Any) -> int:
    """An integer that fits a signed 64-bit column."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not INT64_MIN <= value <= INT64_MAX:
            raise ValueBoundsError("out of the 64-bit integer range")
        return value
    number = to_decimal(value)
    if number != number.to_integral_value():
        raise ValueBoundsError("not a whole number")
    if not INT64_MIN <= number <= INT64_MAX:  # exponent ≤ 38: comparing is cheap
        raise ValueBoundsError("out of the 64-bit integer range")
    return int(number)


def to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, str | int) else ""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueBoundsError("not a boolean")


def to_datetime(value: Any) -> dt.datetime:
    """A naive datetime from a date(time), a year (1000..9999), a Unix timestamp or ISO
    text."""
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None) if value.tzinfo else value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _datetime_of_number(value)
    if not isinstance(value, str):
        raise ValueBoundsError(f"a {type(value).__name__} is not a date")
    return _datetime_of_text(value.strip())


def _datetime_of_number(value: float) -> dt.datetime:
    """A year (1000..9999), else a Unix timestamp within the years 1..9999."""
    if isinstance(value, float):
        _finite(value)
    if 1000 <= value <= 9999:
        return dt.datetime(int(value), 1, 1)
    if not MIN_TIMESTAMP <= value <= MAX_TIMESTAMP:
        raise ValueBoundsError("timestamp out of the years 1..9999")
    return dt.datetime(1970, 1, 1) + dt.timedelta(seconds=float(value))


def _datetime_of_text(text: str) -> dt.datetime:
    """A year ("2005") or ISO text, its length checked before it is read."""
    if len(text) > MAX_DATE_CHARS:
        raise ValueBoundsError(f"longer than {MAX_DATE_CHARS} characters")
    if len(text) == 4 and text.isascii() and text.isdigit():
        return dt.datetime(int(text), 1, 1)
    if not text.isascii():
        raise ValueBoundsError("not an ISO date")
    parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return parsed.replace(tzinfo=None) if parsed.tzinfo else parsed


def to_text(value: Any, *, limit: int = MAX_TEXT_CHARS) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueBoundsError("not a finite number")
    if isinstance(value, int) and value.bit_length() > 127:
        raise ValueBoundsError(f"more than {MAX_SIGNIFICANT_DIGITS} digits")
    if not isinstance(value, str | int | float):
        raise ValueBoundsError(f"a {type(value).__name__} is not text")
    text = str(value)
    if len(text) > limit:
        raise ValueBoundsError(f"longer than {limit} characters")
    if "\x00" in text:
        raise ValueBoundsError("text must not contain NUL characters")
    return text


def like_pattern(value: Any) -> str:
    """A LIKE pattern; without ``%`` or ``_`` it matches as "contains"."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueBoundsError("'like' needs a text value")
    pattern = to_text(value, limit=MAX_LIKE_CHARS)
    if pattern.count("%") > MAX_LIKE_WILDCARDS:
        raise ValueBoundsError(f"more than {MAX_LIKE_WILDCARDS} '%' wildcards")
    if "%" not in pattern and "_" not in pattern:
        pattern = f"%{pattern}%"
    return pattern


_PLAIN_NUMBER = re.compile(r"\s*[+-]?(?:0|[1-9]\d{0,14})(?P<frac>\.\d{1,12})?\s*", re.ASCII)


def numeric_kind(values: Any) -> str | None:
    """``integer`` or ``number`` when every one of ``values`` (a text column's distinct
    values, two or more) is a plain decimal number ("32", " 5.8"), as in databases that
    keep numbers as text; else None. A leading zero ("007", a code) is no number, nor are
    more than 15 digits (an identifier a float would round)."""
    seen = list(values)
    if len(seen) < 2:
        return None
    fraction = False
    for v in seen:
        if isinstance(v, bool) or not isinstance(v, str | int | float):
            return None
        if isinstance(v, str):
            m = _PLAIN_NUMBER.fullmatch(v)
            if m is None:
                return None
            fraction = fraction or m.group("frac") is not None
        else:
            fraction = fraction or isinstance(v, float)
    return "number" if fraction else "integer"
