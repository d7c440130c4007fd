"""Word lists for the builtin keyword extractor: function words and conversational
fillers (dropped), comparators (kept with the number that follows), and qualifiers
(kept as keywords of their own). Written for search queries, not general text."""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    """Whitespace-separated words (lists read best as plain text)."""
    return frozenset(text.split())


EN_STOPWORDS: frozenset[str] = _words("""
a an the and or but if then else so than too very just only also not no nor of in on at to
for from by with without into onto about as per via is are was were be been being am do does
did doing done have has had having can could will would shall should may might must need
needs i me my mine myself we us our ours you your yours he him his she her it its they them
their this that these those there here what which who whom whose when where why how all any
some each every both either neither few more most other such own same s t don't doesn't
didn't isn't aren't wasn't weren't won't can't couldn't shouldn't wouldn't i'm i've i'd
i'll you're you've we're they're it's that's what's where's who's how's there's let's
want wants wanted wanna would like find finding search searching look looking show tell give
get got help please know learn see check explain describe information info something
anything thing things stuff someone somebody way ways able kind sort lot lots bit really
maybe perhaps actually basically hey hi hello thanks thank ok okay yes currently today's
""")

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

ZH_STOPWORDS: frozenset[str] = _words("""
我 我们 你 你们 他 她 它 他们 的 地 得 了 着 过 吗 呢 吧 啊 呀 嘛 哦 么 是 有 在 和 与 及 或 或者
还是 跟 同 给 把 被 让 对 对于 关于 从 向 到 为 为了 以 用 就 也 都 还 又 很 太 非常 比较 更
想 想要 要 需要 找 找找 找到 查 查找 查询 查一下 搜 搜索 搜一下 看 看看 了解 知道 告诉 告诉我 介绍
介绍一下 一下 一些 一点 有些 有没有 帮 帮我 帮忙 请 请问 麻烦 能 能否 能不能 可以 可不可以 会
什么 什么样 哪 哪些 哪个 哪里 哪儿 怎么 怎么样 怎样 如何 为什么 多少 几 几个 几款 个 款 种 些
这 这个 这些 那 那个 那些 吗？ 谢谢 你好 您 您好 一个 一款 一种 应该 可能 是否 不是 没有
""")

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
