"""Schematic of pretraining then fine-tuning on a synthetic world (chapter 10).

Left, the pretraining corpus: sentences about *every* person of a :class:`~lib.training.world.World`.
Middle, one Transformer, pretrained on it (next-token or masked). Right, the questions: fine-tuning
asks about some people only; the evaluation asks the same question about the others, whose facts the
model could only have read during pretraining. The sentences, names and counts are the world's own.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from ...model.checks import check_int
from ...training.world import QUESTIONS, TEMPLATES, World
from .canvas import Canvas


def _people(name: str, people: object, n: int) -> list[int]:
    if not isinstance(people, (list, tuple, range)):
        raise TypeError(f"{name} must be a list or range of person indices, got {type(people).__name__}")
    people = list(people)
    if not people:
        raise ValueError(f"{name} must name at least one person")
    if any(not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < n for i in people):
        raise ValueError(f"{name} must hold person indices in [0, {n}), got {people[:5]}…")
    return people


def pretraining_schematic(world: World, finetune_people, test_people, corpus_people: int | None = None) -> Figure:
    """Draw corpus → model → fine-tuning questions → answers for unseen people, from ``world`` and its
    split: ``finetune_people`` (asked in fine-tuning) and ``test_people`` (asked only in the
    evaluation), two disjoint lists of person indices, among the first ``corpus_people`` people (those
    the corpus writes about; ``None``: every person of the world)."""
    if not isinstance(world, World):
        raise TypeError(f"world must be a World (lib.training.world.make_world), got {type(world).__name__}")
    n = len(world.people) if corpus_people is None else check_int("corpus_people", corpus_people, minimum=1)
    if n > len(world.people):
        raise ValueError(f"corpus_people={n} is more than the world's {len(world.people)} people")
    seen = _people("finetune_people", finetune_people, n)
    unseen = _people("test_people", test_people, n)
    if set(seen) & set(unseen):
        raise ValueError("finetune_people and test_people must be disjoint: the test asks about people never asked")
    a, b = seen[0], unseen[0]
    name = world.people

    def said(person: int, template: str) -> str:
        return " ".join(world.sentence(person, template))

    c = Canvas(12.4, 5.6, title="Pretrain on text about everyone, fine-tune on questions about some", scale=0.62)
    # ---- the corpus: every person, every form
    corpus = c.region(0.2, 0.3, 4.6, 4.9, f"pretraining corpus: {n} people × {len(TEMPLATES)} forms", role="input")
    lines = [(a, TEMPLATES[0]), (a, TEMPLATES[5]), (b, TEMPLATES[2]), (b, TEMPLATES[6]), (b, TEMPLATES[5])]
    for k, (person, template) in enumerate(lines):
        role = "query" if person == a else "value"
        c.box(0.4, 3.95 - 0.72 * k, 4.2, 0.55, said(person, template), role=role, fontsize=8)
    c.text(2.5, 0.62, f"= {n * len(TEMPLATES)} sentences; every fact of every person", fontsize=8, italic=True)

    # ---- the model, pretrained on the corpus
    model = c.box(
        5.75,
        2.05,
        2.1,
        1.5,
        "Transformer\nnext token (GPT),\nspan infilling (A5)\nor masked (BERT)",
        role="decoder",
        fontsize=8,
    )
    c.arrow(corpus.right, model.left)
    c.text(5.27, 3.05, "1. pretrain", fontsize=8, bold=True)

    # ---- the questions: fine-tuning on some people, the test on the others
    question = QUESTIONS["place"]
    answer_a = world.places[world.place[a]]
    tune = c.region(8.55, 3.05, 3.75, 2.15, f"fine-tuning: {len(seen)} people", role="query")
    c.text(10.42, 4.3, "question → answer", fontsize=8, italic=True)
    c.box(8.65, 3.3, 3.55, 0.55, f"{question.format(person=name[a])}  {answer_a}", role="query", fontsize=8)
    test = c.region(8.55, 0.3, 3.75, 2.15, f"test: the other {len(unseen)} people", role="value")
    c.text(10.42, 1.45, "never asked in fine-tuning;\nread only in the corpus", fontsize=8, italic=True)
    c.box(8.65, 0.55, 3.55, 0.55, f"{question.format(person=name[b])}  ?", role="value", fontsize=8)
    c.arrow(tune.left, (model.right[0], model.right[1] + 0.35))
    c.text(7.6, 4.15, "2. fine-tune", fontsize=8, bold=True)
    c.arrow((model.right[0], model.right[1] - 0.35), test.left)
    c.text(7.75, 1.5, "3. answer", fontsize=8, bold=True)
    return c.done()
