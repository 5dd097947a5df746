"""lib/book/claim_labels.py: the plain label and unit of every measured value, shipped inside lib.

That every claim the pages show has its labels (and their Chinese) is tests/tools/test_i18n.py's."""

from __future__ import annotations

import json
import tomllib
from importlib import resources
from pathlib import Path

from lib.book.claim_labels import LABELS_FILE, ValueLabel, labels_by_page, value_labels

REPO = Path(__file__).resolve().parents[2]


def test_a_label_shows_the_value_with_its_unit() -> None:
    assert ValueLabel("time", "s").shows("0.5") == "time: 0.5 s"
    assert ValueLabel("growth", "×").shows("13.3") == "growth: 13.3×"  # a ratio: no space before ×
    assert ValueLabel("solved", "（共 8 个）").shows("4", "：") == "solved：4（共 8 个）"
    assert ValueLabel("parameters").shows("1,024") == "parameters: 1,024"  # a count: no unit


def test_the_labels_are_found_by_statement() -> None:
    found = value_labels("after pretraining, before any fine-tuning: median cloze accuracy > 1/2")
    assert found == {"gpt_cloze": ValueLabel("cloze accuracy of each pretrained decoder (4 seeds)", "share of test people")}
    assert value_labels("a statement no chapter makes") == {}
    found["gpt_cloze"] = ValueLabel("changed")  # a copy: the table itself is left as it was
    assert value_labels("after pretraining, before any fine-tuning: median cloze accuracy > 1/2") != found


def test_the_file_is_pages_of_statements_of_names_with_a_label_and_a_unit() -> None:
    raw = json.loads(resources.files("lib.book").joinpath(LABELS_FILE).read_text(encoding="utf-8"))
    assert set(raw) >= {"01", "10", "performance", "distributed"}
    pairs = [pair for claims in raw.values() for names in claims.values() for pair in names.values()]
    assert len(pairs) > 300
    assert all(isinstance(p, list) and len(p) == 2 and all(isinstance(w, str) for w in p) for p in pairs)
    assert all(label.strip() == label and label for label, _ in pairs)
    assert sum(len(names) for claims in labels_by_page().values() for names in claims.values()) == len(pairs)


def test_a_statement_on_two_pages_means_the_same_there() -> None:
    seen: dict[str, dict[str, ValueLabel]] = {}
    for claims in labels_by_page().values():
        for statement, names in claims.items():
            for name, label in names.items():
                assert seen.setdefault(statement, {}).setdefault(name, label) == label, (statement, name)


def test_the_labels_ship_with_the_package() -> None:
    """Colab installs lib with pip from git: the JSON file must be package data."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "**/*.json" in config["tool"]["setuptools"]["package-data"]["lib"]
    assert (REPO / "lib" / "book" / LABELS_FILE).is_file()
