"""The stop words of the package's languages: English in two parts, Chinese in one.

A query word in these lists says how something is asked, not what is asked about, so the
keyword extractor drops it (web search) and the natural-language parser never matches it
as a value or text (database search). English is two named parts: function words (pronouns,
articles, prepositions, auxiliaries and their contractions) and request words (the
fillers of a spoken request: "can you please help me find"). Chinese is the same two parts
in one list. They are read through the language records
(:attr:`~agent_search.language.Language.stopwords`, ``function_words``,
``request_words``); other uses with a vocabulary of their own add to them by name (the
parser's words about records: :data:`agent_search.query.nl._lexicon.DATA_WORDS`).
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    """Whitespace-separated words (lists read best as plain text)."""
    return frozenset(text.split())


ENGLISH_FUNCTION_WORDS: frozenset[str] = _words("""
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing done don't doesn't didn't down
during each either else every few for from further had has have having he her here hers
herself him himself his how however i if in into is isn't aren't wasn't weren't it its
itself just may me might mine more most must my myself neither no nor not now of off on
once only onto or other our ours ourselves out over own per same shall she should so some
such than that the their theirs them themselves then there these they this those through
thus to too under until up us very via was we were what when where which while who whom
whose why will with without would you your yours yourself yourselves s t won't can't
couldn't shouldn't wouldn't i'm i've i'd i'll you're you've we're they're it's that's
what's where's who's how's there's let's many much
""")
"""Words that carry grammar, not a subject."""

ENGLISH_REQUEST_WORDS: frozenset[str] = _words("""
want wants wanted wanna like need needs find finding search searching look looking lookup
show display fetch list tell give get got help please know learn see check explain
describe information info something anything thing things stuff someone somebody way ways
able kind sort lot lots bit really maybe perhaps actually basically hey hi hello thanks
thank ok okay yes currently today's
""")
"""The fillers of a request ("can you please help me find ...")."""

CHINESE_WORDS: frozenset[str] = _words("""
我 我们 你 你们 他 她 它 他们 的 地 得 了 着 过 吗 呢 吧 啊 呀 嘛 哦 么 是 有 在 和 与 及 或 或者
还是 跟 同 给 把 被 让 对 对于 关于 从 向 到 为 为了 以 用 就 也 都 还 又 很 太 非常 比较 更
想 想要 要 需要 找 找找 找到 查 查找 查询 查一下 搜 搜索 搜一下 看 看看 了解 知道 告诉 告诉我 介绍
介绍一下 一下 一些 一点 有些 有没有 帮 帮我 帮忙 请 请问 麻烦 能 能否 能不能 可以 可不可以 会
什么 什么样 哪 哪些 哪个 哪里 哪儿 怎么 怎么样 怎样 如何 为什么 多少 几 几个 几款 个 款 种 些
这 这个 这些 那 那个 那些 吗？ 谢谢 你好 您 您好 一个 一款 一种 应该 可能 是否 不是 没有
""")
"""The Chinese stop words (function words and request words, on jieba's segmentation)."""
