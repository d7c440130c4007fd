"""The offline extractive responder."""

from __future__ import annotations

import pytest

from agent_search import Searcher
from agent_search.agent import offline_answer
from agent_search.agent._grounding import ground_answer
from agent_search.types import ResultItem


def test_cites_top_references_and_says_it_is_offline() -> None:
    items = [ResultItem(citation_id="4", title="Doc A", content=(
                 "Unrelated opening sentence. The battery lasts 30 hours on one charge. "
                 "Another unrelated line.")),
             ResultItem(citation_id="9", title="Row", content="Wireless headphones X1.",
                        model="product", record_id=1,
                        data={"id": 1, "name": "X1", "price": 49.5, "stock": 3,
                              "__yao_team": "t1", "description": "long text"})]
    text = offline_answer("How long does the battery last?", items, reason="no connector")
    assert text.startswith("I am offline (no connector)")
    assert "The battery lasts 30 hours on one charge. #ref:4" in text
    assert "Unrelated opening" not in text
    assert "(price: 49.5, stock: 3) #ref:9" in text
    assert "__yao_team" not in text and "long text" not in text


def test_no_references() -> None:
    text = offline_answer("q", [], reason="r")
    assert "found no relevant reference" in text


def test_custom_marker_format() -> None:
    text = offline_answer("q", [ResultItem(citation_id="2", title="T", content="Fact.")],
                          reason="r", fmt="[{id}]")
    assert "Fact. [2]" in text


@pytest.mark.anyio
async def test_the_grounding_calls_the_offline_notice_no_claim() -> None:
    """The notice names settings (an environment variable reads as a name), yet it is the
    stream's own sentence, not an unsupported claim; the quoted facts stay supported."""
    from agent_search import Searcher
    from agent_search.agent._grounding import ground_answer

    items = [ResultItem(citation_id="4", title="Doc A",
                        content="The battery lasts 30 hours on one charge.")]
    text = offline_answer("How long does the battery last?", items,
                          reason="connector 'openai' needs OPENAI_API_KEY, which is not set")
    grounding = await ground_answer(Searcher().context(), text, items)
    notice, *rest = grounding
    assert notice["text"].startswith("I am offline") and notice["status"] == "no_claim"
    assert any(g["status"] == "supported" and "30 hours" in g["text"] for g in rest)
    assert not any(g["status"] == "unsupported" for g in grounding), grounding


def test_code_blocks_are_not_quoted_as_prose() -> None:
    """A doc section's fenced block flattened into one line of the answer read as noise;
    the prose around it is quoted, and a section that is only code keeps its code."""
    doc = ResultItem(citation_id="1", title="Command line", content=(
        "Search a collection from the shell.\n```sh\nagent-search search kb \"q\" -c docs\n"
        "```\nThe database search takes a question too."))
    text = offline_answer("How do I search the database?", [doc], reason="r")
    assert "The database search takes a question too. #ref:1" in text
    assert "```" not in text and "-c docs" not in text
    code = ResultItem(citation_id="2", title="Example", content="```sh\nmake demo\n```")
    assert "make demo" in offline_answer("demo", [code], reason="r")


ROLLBACK = ResultItem(citation_id="1", title="Deploying", content=(
    "# Rolling back\n\nTo roll back, run the rollback script:\n\n```sh\n"
    "./rollback.sh --to previous\n```\n\nNever roll back during a migration. It can corrupt "
    "the data.\n\n| Step | Command |\n|---|---|\n| stop the service | `svc stop` |\n"
    "| start it again | `svc start` |\n"))


@pytest.mark.anyio
async def test_an_instruction_is_quoted_with_its_code_and_never_joined_to_the_next() -> None:
    """ "To roll back, run the rollback script: Never roll back during …" (the code
    block dropped between them) read as its opposite: the sentence that introduces the
    code is quoted with the code, as code; the next sentence stands apart."""
    text = offline_answer("How do I roll back a deployment?", [ROLLBACK], reason="r")
    assert "script: Never" not in " ".join(text.split())
    assert "To roll back, run the rollback script:\n\n  ```sh\n  ./rollback.sh --to " \
        "previous\n  ```" in text
    assert "Never roll back during a migration." in text
    grounding = await ground_answer(Searcher().context(), text, [ROLLBACK])
    assert not [g for g in grounding if g["status"] == "unsupported"], grounding


def test_a_table_row_is_quoted_whole_with_its_header() -> None:
    text = offline_answer("Which command stops the service?", [ROLLBACK], reason="r")
    assert "Step: stop the service, Command: `svc stop`." in text
    assert "| stop" not in text and "svc start" not in text


def test_sentences_are_quoted_whole() -> None:
    """Within the budget a sentence is never cut; one far past it is cut at a word."""
    long = "The battery lasts thirty hours on a charge " + "and more " * 30 + "in tests."
    doc = ResultItem(citation_id="1", title="Battery", content=long + " It charges fast.")
    text = offline_answer("How long does the battery last?", [doc], reason="r")
    assert long in text
