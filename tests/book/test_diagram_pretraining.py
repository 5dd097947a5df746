"""lib.book.diagrams.pretraining: the schematic of chapter 10 draws the world's own sentences and split."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from lib.book.diagrams import pretraining_schematic  # noqa: E402
from lib.training.world import TEMPLATES, make_world  # noqa: E402


def texts(figure: Figure) -> str:
    return "\n".join(t.get_text() for ax in figure.axes for t in ax.texts)


@pytest.fixture(scope="module")
def world():
    return make_world(12, n_places=4, seed=5)


def test_the_schematic_shows_the_worlds_sentences_names_and_counts(world):
    fig = pretraining_schematic(world, [2, 3, 4], range(5, 12))
    shown = texts(fig)
    a, b = 2, 5  # the first person of each side
    assert " ".join(world.sentence(a, TEMPLATES[0])) in shown
    assert " ".join(world.sentence(b, TEMPLATES[5])) in shown
    assert f"where was {world.people[a]} born ?  {world.places[world.place[a]]}" in shown
    assert f"where was {world.people[b]} born ?  ?" in shown
    assert f"{12} people × {len(TEMPLATES)} forms" in shown
    assert "fine-tuning: 3 people" in shown and "the other 7 people" in shown
    assert f"= {12 * len(TEMPLATES)} sentences" in shown


def test_the_schematic_refuses_bad_input(world):
    with pytest.raises(TypeError, match="world"):
        pretraining_schematic("world", [0], [1])
    with pytest.raises(TypeError, match="finetune_people"):
        pretraining_schematic(world, 0, [1])
    with pytest.raises(ValueError, match="test_people"):
        pretraining_schematic(world, [0], [])
    with pytest.raises(ValueError, match="test_people"):
        pretraining_schematic(world, [0], [12])
    with pytest.raises(ValueError, match="disjoint"):
        pretraining_schematic(world, [0, 1], [1, 2])


def test_the_schematic_counts_only_the_people_of_the_corpus(world):
    shown = texts(pretraining_schematic(world, [0, 1], [2, 3], corpus_people=4))
    assert f"4 people × {len(TEMPLATES)} forms" in shown and f"= {4 * len(TEMPLATES)} sentences" in shown
    assert "span infilling (A5)" in shown
    with pytest.raises(ValueError, match="test_people"):
        pretraining_schematic(world, [0], [5], corpus_people=4)
    with pytest.raises(ValueError, match="corpus_people"):
        pretraining_schematic(world, [0], [1], corpus_people=13)
    with pytest.raises(TypeError, match="corpus_people"):
        pretraining_schematic(world, [0], [1], corpus_people=4.0)
