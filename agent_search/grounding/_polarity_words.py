"""The words that say what a sentence asserts beyond its content words: negation cues and
direction words, English and Chinese, small and documented (docs/grounding.md). Cues are
a closed class of grammar (not, never, none, hardly...). The axes are the few that
findings are stated on, with how one word turns another ("reduced the risk" is a
benefit), which WordNet's pairs do not say; WordNet's antonyms are read besides, for
English (:mod:`agent_search.grounding._antonyms`). It knows no Chinese.

A direction word belongs to one **axis** and one of its two **poles**; two sentences
that put opposite poles of an axis on the same words say opposite things. English words
are matched by prefix (``increas`` covers increase, increased, increasing, increases),
Chinese words as jieba cuts them.
"""

from __future__ import annotations

NEGATION_EN = frozenset({
    "not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without",
    "cannot", "lack", "lacks", "lacked", "lacking", "absence", "absent", "fail", "fails",
    "failed", "failing", "unable", "devoid", "nowhere", "hardly", "scarcely", "barely",
    "seldom", "rarely", "few", "little",
})
"""English negation cues (and every word ending in n't). "fail(ed) to", "lack(s)",
"absence of" negate what follows them as "not" does; so do the negative adverbs and
quantifiers of English grammar ("hardly any", "few of", "little flooding"), a closed
class like "not" itself ("a few", "a little" are no negation: see below)."""

COUNT_ADJECTIVES_EN = frozenset({"little"})
"""Negating quantifiers of a mass noun ("little flooding", "little evidence") that are
adjectives of size before a plural ("little businesses" are small ones): no cue there.
("few" quantifies plurals: it negates before one.)"""

NOMINAL_NEGATION_EN = frozenset({"without", "lack", "lacks", "lacked", "lacking", "absence",
                                 "absent", "devoid", "no", "none"})
"""Cues that negate the thing named next ("mice lacking SecD", "without diabetes"), not
the rest of the clause: their scope is one content word."""

NOT_NEGATION_EN = frozenset({("not", "only"), ("or", "not"), ("a", "few"), ("a", "little"),
                             ("quite", "few")})
"""Cue pairs that are no negation of what follows ("not only ... but also", "a few"), or
whose negation is idiomatic ("whether or not"). "no longer" is one: "no longer
endangered" says the opposite of "endangered"."""

NEGATING_PREFIXES_EN = ("non-", "non", "anti-", "anti", "ant", "un", "in", "im", "ir", "il")
"""A word made of one of these and a word of the other text negates that word
("unaffected" / "affected", "non-smokers" / "smokers", "insignificant" / "significant",
"antagonist" / "agonist")."""

SHORT_STEM_PREFIXES_EN = frozenset({"un", "non", "non-"})
"""Prefixes that negate even a short word ("unsafe" / "safe", "unfit" / "fit"): the
others need five letters after them ("inform" is no negated "form")."""

NEGATION_ZH = frozenset({
    "不", "没", "没有", "未", "无", "非", "否", "勿", "莫", "别", "不是", "并不", "并非",
    "并未", "无法", "未能", "不能", "不会", "不可", "不得", "不再", "尚未", "从未", "从不",
    "毫无", "绝不", "决不", "未曾", "不曾", "无需", "不必", "不用", "没能", "无关", "不要",
    "不到", "未有", "缺乏", "缺少",
})
"""Chinese negation cues as jieba cuts them."""

NEGATING_HEADS_ZH = ("不", "未", "没", "无", "非")
"""A jieba word opening with one of these, whose rest is a word of the other text, negates
it (不支持 / 支持, 无效 / 有效 is not caught: only the rest is compared)."""

NOT_NEGATION_ZH = frozenset({
    "不同", "不断", "不少", "不仅", "不过", "不但", "不管", "不久", "不禁", "不论", "不已",
    "不光", "不然", "不只", "不如", "不时", "不日", "非常", "非法", "未来", "无论", "无数",
    "无限", "无人机", "无线", "无疑", "无比", "没什么", "不得不", "无不", "非得", "未必",
    "不一定", "不妨", "不及", "不止", "否则", "别人", "别的", "莫斯科", "不仅仅",
})
"""Words opening with a negation character that do not negate (不同 "different", 非常
"very", 未来 "future", 无论 "whatever", 不断 "continuously", 不少 "many")."""

# axis → (pole A, pole B); entries of five letters or more match as prefixes, shorter
# ones as whole words (so "more" is not "moreover", "fell" not "fellow")
DIRECTIONS_EN: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "amount": (
        ("increas", "high", "rise", "rises", "rose", "risen", "rising", "raise", "raised", "raises",
         "raising", "elevat", "higher", "highest", "more", "greater", "greatest", "larger",
         "largest", "bigger", "gain", "gains", "gained", "enhanc", "augment", "boost",
         "upregul", "up-regul", "exceed", "above", "accelerat", "promot", "stimulat",
         "activat", "expand", "grow", "grows", "grew", "grown", "growing", "longer", "most",
         "maxim", "overexpress", "over-express", "strengthen", "amplif", "induce",
         "doubled", "doubles", "doubling", "tripled", "triples", "tripling"),
        ("decreas", "reduc", "low", "lower", "lowest", "fall", "falls", "fell", "fallen",
         "falling", "declin", "drop", "drops", "dropped", "less", "least", "fewer",
         "smaller", "smallest", "loss", "lose", "loses", "losing", "lost", "diminish",
         "attenuat", "downregul", "down-regul", "below", "slow", "slows", "slowed",
         "slower", "inhibit", "suppress", "impair", "shrink", "shrank", "shorter",
         "minim", "underexpress", "weaken", "deplet", "abolish", "abrogat", "deactivat",
         "lessen", "halve", "halving", "prevent")),
    "time": (("before", "prior", "earlier", "earliest", "preced", "pre-"),
             ("after", "later", "latest", "following", "subsequent", "post-")),
    "sign": (("positiv",), ("negativ",)),
    "valence": (("risk", "risks", "harm", "harms", "harmed", "harmful", "detriment",
                 "advers", "deleteri", "worse", "worsen", "hazard", "toxic", "danger"),
                ("protect", "benefi", "better", "improv", "favorabl", "favourabl", "safe",
                 "safer", "safety")),
}
"""English direction words by axis and pole ("doubled", not "doubl": "double-blind" says
nothing of an amount; "prevent" lowers one, as "inhibit" does). ``valence`` is what is
good or bad for whom: "a lower risk" is a benefit, so an amount word just before a
valence word turns its pole ("reduced the risk" and "protects" agree)."""

DIRECTIONS_ZH: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "amount": (
        frozenset({"增加", "增多", "增长", "增大", "增强", "升高", "上升", "提高", "提升", "上涨",
                   "扩大", "加大", "加快", "加速", "高于", "多于", "超过", "更多", "更高",
                   "最高", "最多", "上调", "涨", "升", "增", "领先", "促进", "激活", "增高",
                   "大于", "走高", "攀升", "飙升", "回升", "增幅", "高", "多", "大增",
                   "翻倍", "翻番", "倍增"}),
        frozenset({"减少", "减小", "减弱", "降低", "下降", "下跌", "缩小", "减缓", "放缓",
                   "低于", "少于", "不足", "更少", "更低", "最低", "最少", "下调", "跌", "降",
                   "减", "落后", "抑制", "阻断", "小于", "走低", "回落", "下滑", "跌幅",
                   "降幅", "萎缩", "低", "少", "大减", "减半", "预防", "防止"})),
    "time": (frozenset({"之前", "以前", "此前", "早于", "提前", "先于", "事前", "前"}),
             frozenset({"之后", "以后", "此后", "晚于", "推迟", "延迟", "随后", "事后", "后"})),
    "valence": (frozenset({"风险", "危害", "有害", "不利", "危险", "损害", "恶化"}),
                frozenset({"保护", "有益", "有利", "好处", "益处", "改善", "安全"})),
}
"""Chinese direction words by axis and pole, as jieba cuts them."""

ATTRIBUTIVE_EN = frozenset({"high", "low"})
"""The scale adjectives of the amount axis in their positive degree (not "higher",
"rose"): before a noun they name a kind ("high blood pressure", "low income"), not a
change; WordNet's antonyms still set one against the other."""

CLAUSE_BREAKS_EN = frozenset({"but", "whereas", "while", "although", "though", "however",
                              "yet", "unlike", "except", "despite"})
"""Words that start a clause whose polarity is its own."""

CLAUSE_BREAKS_ZH = frozenset({"但", "但是", "而", "却", "然而", "不过", "虽然", "尽管", "而是"})
