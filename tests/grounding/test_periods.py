"""A Chinese period of the calendar named the other way: 1至9月 for 前三季度, 1-6月 for
上半年. A month range that is not the reference's period stays flagged. Sentences
written for these tests (not from the bench's set)."""

from __future__ import annotations

import pytest

from agent_search.grounding._numbers_zh import period_values
from tests.support.grounding import verdict

OUTPUT = "前三季度，全省粮食产量同比增长2.5%，其中秋粮增长3.1%。"
SALES = "1至6月，全市社会消费品零售总额同比增长7.2%。"


@pytest.mark.parametrize(("answer", "reference"), [
    ("1至9月，全省粮食产量同比增长2.5%#ref:1。", OUTPUT),
    ("1-9月全省粮食产量比上年同期增长2.5%#ref:1。", OUTPUT),
    ("上半年，全市社会消费品零售总额同比增长7.2%#ref:1。", SALES),
    ("前两个季度全市社会消费品零售总额同比增长7.2%#ref:1。", SALES),
])
def test_the_same_period_named_the_other_way_is_supported(answer: str, reference: str
                                                          ) -> None:
    assert verdict(answer, reference) == "supported"


@pytest.mark.parametrize(("answer", "reference"), [
    ("1至6月，全省粮食产量同比增长2.5%#ref:1。", OUTPUT),
    ("1至8月，全市社会消费品零售总额同比增长7.2%#ref:1。", SALES),
    ("前三季度，全市社会消费品零售总额同比增长7.2%#ref:1。", SALES),
])
def test_another_period_is_still_flagged(answer: str, reference: str) -> None:
    assert verdict(answer, reference) == "unsupported"


def test_the_bounds_of_each_kind_of_period() -> None:
    assert period_values("前三季度") == {1.0, 9.0}
    assert period_values("第二季度") == {4.0, 6.0}
    assert period_values("下半年") == {7.0, 12.0}
    assert period_values("1至9月") == {3.0}
    assert period_values("3至5月") == set()  # no count of quarters from January
