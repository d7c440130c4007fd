"""The calibrated confidence of a reading: features that mean the same on any schema, a
probability from them, and a reading under its kind's floor answers nothing and says
why (:mod:`agent_search.query.nl._answer._calibration`)."""

from __future__ import annotations

import anyio
import pytest

from agent_search.query.nl import BuiltinDSLGenerator
from agent_search.query.nl._answer import _calibration as calibration
from agent_search.query.nl._parser import parse
from tests.support.query_schemas import NOW, music, shop


def _assess(question: str, schemas: list, leftover: list[str] | None = None,
            similarity: float | None = None) -> tuple[dict, calibration.Assessment]:
    left: list[str] = []
    out = parse(question, schemas, now=NOW, leftover=left)
    found = calibration.assess(question, out, left if leftover is None else leftover,
                               similarity, schemas)
    return out, found


def test_every_feature_has_a_coefficient_and_a_probability_is_in_0_1() -> None:
    assert len(calibration.FEATURES) == len(calibration.COEFFICIENTS)
    _, found = _assess("albums by Queen", music())
    assert set(found.features) == set(calibration.FEATURES)
    assert 0.0 < found.probability < 1.0


def test_words_left_over_and_names_read_by_meaning_lower_the_confidence() -> None:
    schemas = music()
    out, full = _assess("albums by Queen", schemas)
    assert full.features["left_over"] == 0.0
    weaker = calibration.assess("albums by Queen", out, ["zorro", "quixote"], None, schemas)
    assert weaker.features["left_over"] > 0
    assert weaker.probability < full.probability
    read = calibration.assess("albums by Queen", out, [], 0.6, schemas)
    assert read.features["by_meaning"] == pytest.approx(0.4)
    assert read.probability < full.probability


def test_a_relation_and_an_unnamed_table_are_features_of_the_reading() -> None:
    _, across = _assess("tracks in the Jazz genre", music())
    assert across.features["across"] == 1.0 and across.features["unnamed"] == 0.0
    _, grouped = _assess("the average price of products", shop())
    assert grouped.features["grouped"] == 1.0 and calibration.kind_of(
        grouped.features) == "grouped"


def test_a_count_asked_and_not_computed_is_a_shape_mismatch() -> None:
    schemas = music()
    out = parse("albums by Queen", schemas, now=NOW)
    asked = calibration.assess("how many of the albums by Queen", out, [], None, schemas)
    plain = calibration.assess("albums by Queen", out, [], None, schemas)
    assert asked.features["shape"] == 1.0 and plain.features["shape"] == 0.0


def test_a_reading_under_the_floor_answers_nothing_and_says_why() -> None:
    schemas = music()
    out, _ = _assess("albums by Queen", schemas)
    weak = calibration.assess("albums by Queen", out, ["zorro", "quixote", "boat"], 0.5,
                              schemas)
    silent = calibration.gated(dict(out), weak, threshold=weak.probability + 0.01)
    assert silent["queries"] == [] and "model" not in silent
    why = silent["warnings"][-1]
    assert f"calibrated confidence {weak.probability:.2f}" in why
    assert "content words left unused" in why and "no records are shown" in why
    kept = calibration.gated(dict(out), weak, threshold=weak.probability)
    assert kept == out  # at the floor: answered as read


def test_a_silent_reading_stays_silent_whatever_the_floor() -> None:
    out = {"queries": [], "explanation": "nothing", "confidence": 0.2, "warnings": ["x"]}
    _, found = _assess("albums by Queen", music())
    assert calibration.gated(out, found, threshold=1.0) is out


def test_the_generator_applies_the_floor_of_the_readings_kind(
        monkeypatch: pytest.MonkeyPatch) -> None:
    schemas = music()

    async def ask() -> dict:
        return await BuiltinDSLGenerator(now=lambda: NOW).generate("albums by Queen",
                                                                   schemas)

    answered = anyio.run(ask)
    assert answered.get("wheres"), answered
    monkeypatch.setitem(calibration.THRESHOLDS, "records", 1.0)
    silent = anyio.run(ask)
    assert silent["queries"] == [] and "calibrated confidence" in silent["warnings"][-1]
    monkeypatch.setitem(calibration.THRESHOLDS, "records", 0.0)
    monkeypatch.setitem(calibration.THRESHOLDS, "grouped", 1.0)
    assert anyio.run(ask) == answered  # another kind's floor does not touch it
