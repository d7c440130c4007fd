"""A handful of notes in English and in Chinese, the question each note answers and
questions none does, and the check of the relevance floors on them (issues 24 and 26):
the right note ranks first, off-topic questions get nothing. Shared by the kb tests of
the floors, of the model choice and of the Qdrant-server path."""

from __future__ import annotations

from pathlib import Path

from agent_search import Request, SearchConfig, Searcher
from agent_search.kb import create_handler, ingest_paths

__all__ = ["CHINESE", "CHINESE_OFF_TOPIC", "CHINESE_QUESTIONS", "ENGLISH", "ENGLISH_OFF_TOPIC",
           "ENGLISH_QUESTIONS", "check_floors", "ingest_notes"]

ENGLISH = {
    "bikes.txt": (
        "Bike chain care\n\nClean the chain every few weeks with a rag and degreaser, then "
        "lube it: one drop of chain oil on each roller, wipe off the excess. Lube the chain "
        "about every 150 km, or after every ride in the rain. A dry chain squeaks and wears "
        "the cassette and chainrings fast; replace the chain when it has stretched 0.5%."),
    "garden.txt": (
        "Zucchini harvest\n\nPick zucchini when they are 15 to 20 cm long and the skin is "
        "still glossy; larger ones turn woody and seedy. Check the plants every day in high "
        "summer, cut the fruit off with a knife rather than twisting it, and keep picking: "
        "the plant stops flowering if fruit is left to grow into marrows."),
    "coffee.md": (
        "# Pour-over coffee\n\nUse 15 g of medium-fine ground coffee for 250 g of water just "
        "off the boil (about 94 °C). Rinse the paper filter, bloom the grounds with 40 g of "
        "water for 30 seconds, then pour in slow circles. The whole brew should take about "
        "three minutes; if it runs faster, grind finer."),
    "expenses.md": (
        "# Expense claims\n\nSubmit expense claims within 30 days of the purchase through "
        "the finance portal, with a photo of every receipt. Travel, hotel and meals on "
        "business trips are reimbursed; alcohol is not. Claims over 500 euros need your "
        "manager's approval before they are paid with the next salary."),
}
ENGLISH_QUESTIONS = {
    "how often should I lube my chain": "bikes.txt",
    "when should I harvest zucchini": "garden.txt",
    "how much coffee for a pour over": "coffee.md",
    "how do I get reimbursed for a hotel on a business trip": "expenses.md",
}
ENGLISH_OFF_TOPIC = [
    "who won the football world cup in 2014",
    "what is the capital of australia",
    "how do I train a puppy to sit",
    "which guitar strings are best for beginners",
]

CHINESE = {
    "自行车.txt": (
        "自行车链条保养\n\n每隔几周用抹布和清洁剂清洗链条，"
        "然后上油：每个滚子滴一滴链条油，擦掉多余的油。"
        "大约每骑一百五十公里，或者每次雨天骑行之后，"
        "给链条上一次油。干燥的链条会吱吱作响，"
        "并加快飞轮和牙盘的磨损。"),
    "菜园.txt": (
        "西葫芦收获\n\n西葫芦长到十五到二十厘米、表皮还有光泽的时候就可以采摘了，"
        "太大的会变老、籽多。"
        "盛夏时每天检查植株，用刀割下果实，不要拧。"
        "要不停地采摘，果实留在藤上长大，植株就会停止开花。"),
    "咖啡.md": (
        "# 手冲咖啡\n\n用十五克中细研磨的咖啡粉配二百五十克刚离火的水（约九十四度）。"
        "先用水冲洗滤纸，"
        "用四十克水闷蒸三十秒，然后慢慢画圈注水。"
        "整个冲煮大约三分钟；如果流得太快，就把粉磨细一些。"),
    "报销.md": (
        "# 费用报销\n\n购买后三十天内通过财务系统提交报销申请，"
        "并附上每张发票的照片。出差的交通、住宿和餐费可以报销，"
        "酒水不能报销。超过五百元的报销需要经理批准，批准后随下个月工资发放。"),
}
CHINESE_QUESTIONS = {
    "链条多久上一次油": "自行车.txt",
    "西葫芦什么时候收获": "菜园.txt",
    "手冲咖啡要用多少咖啡粉": "咖啡.md",
    "出差住酒店的费用怎么报销": "报销.md",
}
CHINESE_OFF_TOPIC = [
    "二零一四年世界杯冠军是谁",
    "澳大利亚的首都是哪里",
    "怎么训练小狗坐下",
    "初学者用什么吉他弦好",
]


async def ingest_notes(config: SearchConfig, tmp_path: Path, name: str,
                       notes: dict[str, str]) -> None:
    """``notes`` (file name → text) written to ``tmp_path/name`` and ingested as ``name``."""
    folder = tmp_path / name
    folder.mkdir()
    for file, text in notes.items():
        (folder / file).write_text(text, encoding="utf-8")
    await ingest_paths(config, [folder], name)


async def check_floors(config: SearchConfig, collection: str, questions: dict[str, str],
                       off_topic: list[str]) -> None:
    """With the default floors: each question's note ranks first, off-topic questions
    get nothing (and say how much the floor dropped)."""
    searcher = Searcher(config, handlers=[create_handler(config)])
    try:
        for question, note in questions.items():
            result = await searcher.search(Request(type="kb", query=question,
                                                   collections=[collection], limit=3))
            assert result.error is None, result.error
            sources = [Path(str(i.metadata["source"])).name for i in result.items]
            assert sources[:1] == [note], (question, sources, result.dropped_below_floor)
        for question in off_topic:
            result = await searcher.search(Request(type="kb", query=question,
                                                   collections=[collection], limit=3))
            assert result.error is None, result.error
            assert result.items == [], (question, [(i.title, i.score) for i in result.items])
            assert result.dropped_below_floor > 0
    finally:
        await searcher.aclose()
