"""What a claim's measured values are, in words: a plain label and a unit for every value a chapter records.

A claim records its values under the names of the code (``lib.claim(..., bert_cloze=accs)``): the
names the condition is written over, and the names the seed sweep and the Claims appendix list. A
reader of the box wants to know what was measured and in what unit, so the box shows each value as
``label: value unit`` (``cloze accuracy of each masked encoder (4 seeds): [0.46, 0.52, 0.5, 0.49]
share of test people``), with the labels of ``claim_labels.json``, which ships inside ``lib`` (the
Colab install from git included) so that Jupyter, Colab and the site show the same box.

The file is keyed by the claim's **statement**, the key of the seed sweep's ledger and of the Chinese
catalog of statements (statements are unique in a chapter), page by page::

    {"10": {"after pretraining, before any fine-tuning: median cloze accuracy > 1/2":
               {"gpt_cloze": ["cloze accuracy of each pretrained decoder (4 seeds)", "share of test people"]}}}

each value name with ``[label, unit]``: the label says what was measured in plain words (never the
variable name), the unit what its numbers count (``s``, ``×`` for a ratio, ``nats per token``,
``share of test people``); ``""`` where a number has no unit (a count said in the label, a
correlation). ``tests/tools/test_i18n.py`` checks that every value of every claim the pages show has
a label, and that every label and unit has its Chinese translation in
``locale/zh_CN/LC_MESSAGES/claim-values.po`` (the Chinese site draws the boxes with it). A value
without a label (a reader's own claim) is shown as before, ``name=value``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources

LABELS_FILE = "claim_labels.json"  # in this package: lib/book/claim_labels.json
NO_SPACE_BEFORE = ("×", "%", "（", "(")  # units written right after the number: 13×, 4（共 8 个）


@dataclass(frozen=True)
class ValueLabel:
    """What one measured value is: ``label`` in plain words, ``unit`` its unit (``""`` if none)."""

    label: str
    unit: str = ""

    def shows(self, shown_value: str, colon: str = ": ") -> str:
        """``label: value unit`` (``colon`` between label and value: ``"："`` in Chinese)."""
        unit = self.unit
        if unit and not unit.startswith(NO_SPACE_BEFORE):
            unit = " " + unit
        return f"{self.label}{colon}{shown_value}{unit}"


@functools.cache
def labels_by_page() -> dict[str, dict[str, dict[str, ValueLabel]]]:
    """Every label of :data:`LABELS_FILE`: page (``"04"``, ``"performance"``) -> statement -> name -> label."""
    text = resources.files(__package__).joinpath(LABELS_FILE).read_text(encoding="utf-8")
    return {
        page: {
            statement: {name: ValueLabel(*pair) for name, pair in names.items()}
            for statement, names in claims.items()
        }
        for page, claims in json.loads(text).items()
    }


@functools.cache
def _by_statement() -> dict[str, dict[str, ValueLabel]]:
    found: dict[str, dict[str, ValueLabel]] = {}
    for claims in labels_by_page().values():
        for statement, names in claims.items():
            found.setdefault(statement, {}).update(names)
    return found


def value_labels(statement: str) -> dict[str, ValueLabel]:
    """The labels of the values of the claim whose statement is `statement` (name -> label; empty if none)."""
    return dict(_by_statement().get(statement, {}))
