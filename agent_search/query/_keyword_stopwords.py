"""Word lists for the builtin keyword extractor: stop words (dropped; each language
record's :attr:`~agent_search.language.Language.stopwords`), comparators (kept with the number
that follows), and qualifiers (kept as keywords of their own)."""

from __future__ import annotations

from agent_search.language import CHINESE, ENGLISH


def _words(text: str) -> frozenset[str]:
    """Whitespace-separated words (lists read best as plain text)."""
    return frozenset(text.split())


EN_STOPWORDS = ENGLISH.stopwords
"""Dropped words: the English record's stop words."""

EN_COMPARATORS: tuple[str, ...] = (
    "cheaper than", "less than", "more than", "greater than", "fewer than", "lower than",
    "higher than", "at least", "at most", "up to", "no more than", "not more than",
    "under", "below", "over", "above", "around", "about", "approximately", "between",
    "within", "from", "since", "before", "after", "max", "min", "maximum", "minimum",
)
"""Words that, followed by a number or price, form one keyword ("under $100")."""

EN_QUALIFIERS: frozenset[str] = _words("""
best top cheapest cheap cheaper latest newest new recent good great popular recommended
affordable budget fastest fast lightest smallest largest biggest easiest simplest free
premium top-rated highest lowest
""")
"""Ranking adjectives: worth searching for, but not part of the thing searched."""

ZH_STOPWORDS = CHINESE.stopwords
"""Dropped words: the Chinese record's stop words."""

ZH_PREFIX_COMPARATORS: frozenset[str] = _words("""
低于 少于 小于 不到 不超过 不高于 不多于 高于 大于 多于 超过 至少 最多 最少 大约 约 大概
""")
ZH_SUFFIX_COMPARATORS: frozenset[str] = _words("""
以下 以内 之内 以上 之上 左右 上下 之间 以前 之前 以后 之后 内 起
""")
ZH_UNITS: frozenset[str] = _words("""
元 块 块钱 美元 美金 刀 人民币 万 千 百 亿 年 月 日 号 天 周 岁 克 公斤 斤 米 公里 寸 英寸 g kg
GB TB MB 核 位 分钟 小时 秒
""")

ZH_QUALIFIERS: frozenset[str] = _words("""
最好 最佳 最新 最近 最便宜 便宜 实惠 推荐 热门 好用 好 性价比 高性价比 最受欢迎 流行 免费 最快 官方
""")

PRICE_SYMBOLS = "$€£¥￥₹"
