r"""A synthetic world of people and their facts: a pretraining corpus and questions (chapter 10).

A world, drawn from a seed, holds ``n_people`` people (one made-up name each, one token), a birthplace
for each (one of ``n_places`` cities, drawn uniformly) and a job (one of ``n_jobs``). From it come

- the **corpus**: every person's facts written in each of :data:`TEMPLATES`, varied sentences that
  put the facts in different places and orders, ``<bos> … <eos>``, one row per (person, template)::

      <bos> Kato was born in Lima . <eos>
      <bos> Lima is where Kato was born . <eos>
      <bos> the pilot Kato was born in Lima . <eos>

- **questions** about a set of people, in a form the corpus never uses (:data:`QUESTIONS`)::

      where was Kato born ?              → Lima
      what does Kato do ?                → pilot

- **cloze prompts**: a template cut where the fact begins, ``Kato was born in`` (read the next token)
  or with ``<mask>`` in its place, ``<mask> is where Kato was born .`` (read the masked position).

Every sentence is a row of token ids of one :class:`~lib.training.batching.Vocab`, whose extra tokens
are ``<mask>`` (BERT's mask) and the sentinels ``<extra_0>``, ``<extra_1>``, … of span corruption
(:mod:`lib.training.masking`). The world is a plain record: the same seed gives the same world.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch
from torch import Tensor

from ..model.checks import check_choice, check_int
from .batching import LMBatch, Vocab, pad_sequences
from .device import check_seed

#: The cities a person can be born in (the first ``n_places`` are used).
PLACES = (
    "Lima", "Oslo", "Cairo", "Delhi", "Quito", "Seoul", "Perth", "Dakar", "Paris", "Tokyo",
    "Accra", "Hanoi", "Minsk", "Riga", "Sofia", "Turin", "Porto", "Kyoto", "Tunis", "Basel",
    "Bern", "Nice", "Lyon", "Graz",
)  # fmt: skip
#: The jobs a person can have (the first ``n_jobs`` are used).
JOBS = (
    "baker", "pilot", "nurse", "judge", "chef", "poet", "miner", "tailor", "farmer", "lawyer",
    "singer", "sailor", "doctor", "potter", "clerk", "guard",
)  # fmt: skip
#: The pretraining sentences: every person's facts in each of these forms.
TEMPLATES = (
    "{person} was born in {place} .",
    "{person} works as a {job} .",
    "{person} , a {job} , was born in {place} .",
    "{person} was born in {place} and works as a {job} .",
    "the {job} {person} was born in {place} .",
    "{place} is where {person} was born .",
    "born in {place} , {person} works as a {job} .",
    "{person} grew up in {place} .",
)
#: The fine-tuning questions, by the attribute they ask for: the question, then its one-token answer.
QUESTIONS = {"place": "where was {person} born ?", "job": "what does {person} do ?"}
MASK = "<mask>"
N_SENTINELS = 8

_CONSONANTS, _VOWELS = "bdfgklmnprstvz", "aeiou"


def _name_pool() -> list[str]:
    """Every made-up name of two syllables (``Kato``, ``Mira``) that is not a word of the world."""
    taken = {w.lower() for w in (*PLACES, *JOBS, *_words())}
    pool = [c1 + v1 + c2 + v2 for c1 in _CONSONANTS for v1 in _VOWELS for c2 in _CONSONANTS for v2 in _VOWELS]
    return [name.capitalize() for name in pool if name not in taken]


def _words() -> list[str]:
    """The other words of the templates and questions."""
    text = " ".join([*TEMPLATES, *QUESTIONS.values()])
    return sorted({w for w in text.split() if not w.startswith("{")})


@dataclass(frozen=True)
class World:
    """People with a birthplace and a job, and the token ids to write about them (see the module docstring).

    ``place[i]`` and ``job[i]`` are indices into ``places`` and ``jobs`` for person ``i``.
    """

    people: tuple[str, ...]
    places: tuple[str, ...]
    jobs: tuple[str, ...]
    place: tuple[int, ...]
    job: tuple[int, ...]
    vocab: Vocab

    @property
    def mask_id(self) -> int:
        """The id of ``<mask>``."""
        return self.vocab.stoi[MASK]

    @property
    def sentinel_ids(self) -> list[int]:
        """The ids of the span-corruption sentinels ``<extra_0>``, ``<extra_1>``, …"""
        return [self.vocab.stoi[f"<extra_{i}>"] for i in range(N_SENTINELS)]

    @property
    def special_ids(self) -> list[int]:
        """Ids that are never text: ``<pad>``, ``<bos>``, ``<eos>``, ``<mask>`` and the sentinels."""
        return [self.vocab.pad_id, self.vocab.bos_id, self.vocab.eos_id, self.mask_id, *self.sentinel_ids]

    def candidate_ids(self, attribute: str = "place") -> list[int]:
        """The ids of the possible answers for ``attribute`` (``"place"`` or ``"job"``), in the order of
        ``places`` or ``jobs``."""
        check_choice("attribute", attribute, QUESTIONS)
        return self.vocab.encode(self.places if attribute == "place" else self.jobs)

    def answers(self, people: list[int] | range, attribute: str = "place") -> Tensor:
        """``[n]``: for each person, the index of the answer among :meth:`candidate_ids`."""
        self._check_people(people)
        check_choice("attribute", attribute, QUESTIONS)
        facts = self.place if attribute == "place" else self.job
        return torch.tensor([facts[i] for i in people], dtype=torch.long)

    def sentence(self, person: int, template: str) -> list[str]:
        """The words of ``template`` about ``person`` (no ``<bos>``/``<eos>``)."""
        self._check_people([person])
        fields = dict(
            person=self.people[person], place=self.places[self.place[person]], job=self.jobs[self.job[person]]
        )
        return template.format(**fields).split()

    def corpus(self, templates: tuple[str, ...] = TEMPLATES) -> Tensor:
        """The pretraining corpus, ``[n_people · len(templates), L]``: ``<bos>`` sentence ``<eos>``, one row per
        (person, template), person-major, right-padded with ``<pad>``."""
        if isinstance(templates, str) or len(templates) == 0:
            raise ValueError(f"templates must be a non-empty sequence of template strings, got {templates!r}")
        v = self.vocab
        rows = [
            [v.bos_id, *v.encode(self.sentence(i, template)), v.eos_id]
            for i in range(len(self.people))
            for template in templates
        ]
        return pad_sequences(rows, v.pad_id)

    def questions(self, people: list[int] | range, attribute: str = "place") -> LMBatch:
        """Questions about ``people`` for a decoder-only model: ``<bos> where was Kato born ?``, whose next
        token is the answer (``Lima``).

        ``input`` ``[n, L]`` is the question; ``target`` ``[n, L]`` holds the answer's id at the last
        position (the one that predicts it) and ``<pad>`` everywhere else, so
        :func:`~lib.training.losses.lm_loss` trains the answer only, and a model's answer is its
        prediction at position ``L - 1``.
        """
        self._check_people(people)
        check_choice("attribute", attribute, QUESTIONS)
        v = self.vocab
        rows = [[v.bos_id, *v.encode(QUESTIONS[attribute].format(person=self.people[i]).split())] for i in people]
        tokens = torch.tensor(rows, dtype=torch.long)
        target = torch.full_like(tokens, v.pad_id)
        target[:, -1] = torch.tensor(self.candidate_ids(attribute))[self.answers(people, attribute)]
        return LMBatch(tokens, target, v.pad_id)

    def masked_questions(self, people: list[int] | range, attribute: str = "place") -> LMBatch:
        """Questions about ``people`` for an encoder: ``<bos> where was Kato born ? <mask> <eos>``.

        ``input`` ``[n, L]``; ``target`` ``[n, L]`` holds the answer's id at the ``<mask>`` (position
        ``L - 2``) and ``<pad>`` elsewhere: :func:`~lib.training.losses.lm_loss` trains the answer only.
        """
        self._check_people(people)
        check_choice("attribute", attribute, QUESTIONS)
        v = self.vocab
        rows = [
            [v.bos_id, *v.encode(QUESTIONS[attribute].format(person=self.people[i]).split()), self.mask_id, v.eos_id]
            for i in people
        ]
        tokens = torch.tensor(rows, dtype=torch.long)
        ids = torch.tensor(self.candidate_ids(attribute))[self.answers(people, attribute)]
        target = torch.full_like(tokens, v.pad_id)
        target[:, -2] = ids
        return LMBatch(tokens, target, v.pad_id)

    def cloze(self, people: list[int] | range, template: str, masked: bool = False) -> tuple[Tensor, int]:
        """Cloze prompts about ``people`` from ``template`` (one with a ``{place}`` or ``{job}`` field: the
        gap is ``{place}`` when it has both, and the other field holds the person's own fact).

        ``masked=False``: the template cut before the gap, ``<bos> Kato was born in``, read at its last
        position (next-token prediction); ``masked=True``: the whole sentence with ``<mask>`` for the
        gap, ``<bos> <mask> is where Kato was born . <eos>``, read at the mask (with the mask filled in,
        it is the person's sentence of the corpus). Returns the prompts ``[n, L]`` and the position to read.
        """
        self._check_people(people)
        if not isinstance(template, str):
            raise TypeError(f"template must be a str such as '{{person}} was born in {{place}} .', got {template!r}")
        if not isinstance(masked, bool):
            raise TypeError(f"masked must be True or False, got {masked!r}")
        field = "{place}" if "{place}" in template else "{job}" if "{job}" in template else None
        if field is None or "{person}" not in template:
            raise ValueError(f"template must hold {{person}} and a {{place}} or {{job}} field, got {template!r}")
        v = self.vocab
        before, after = template.split(field, 1)
        rows = []
        for i in people:
            facts = dict(person=self.people[i], place=self.places[self.place[i]], job=self.jobs[self.job[i]])
            head, tail = before.format(**facts).split(), after.format(**facts).split()
            rows.append([v.bos_id, *v.encode(head), *([self.mask_id, *v.encode(tail), v.eos_id] if masked else [])])
        position = 1 + len(head) if masked else len(rows[0]) - 1  # every name, place and job is one token
        return torch.tensor(rows, dtype=torch.long), position

    def _check_people(self, people: object) -> None:
        if not isinstance(people, (list, tuple, range)):
            raise TypeError(f"people must be a list or range of person indices, got {type(people).__name__}")
        for i in people:
            check_int("person", i, minimum=0, maximum=len(self.people) - 1)


def make_world(n_people: int = 200, n_places: int = 20, n_jobs: int = 10, *, seed: int) -> World:
    """Draw a :class:`World` from ``seed`` (a ``random.Random`` of its own): ``n_people`` distinct names,
    each person's birthplace uniform over the first ``n_places`` of :data:`PLACES` and job uniform over
    the first ``n_jobs`` of :data:`JOBS`. The vocabulary (specials, ``<mask>``, sentinels, the template
    words, every place, job and name) depends only on the sizes and the names."""
    pool = _name_pool()
    check_int("n_people", n_people, minimum=2, maximum=len(pool))
    check_int("n_places", n_places, minimum=2, maximum=len(PLACES))
    check_int("n_jobs", n_jobs, minimum=2, maximum=len(JOBS))
    check_seed("seed", seed, bits=None)  # Python's random.Random: -7 would draw what 7 draws
    rng = random.Random(seed)
    people = rng.sample(pool, n_people)
    place = tuple(rng.randrange(n_places) for _ in range(n_people))
    job = tuple(rng.randrange(n_jobs) for _ in range(n_people))
    places, jobs = PLACES[:n_places], JOBS[:n_jobs]
    extras = [MASK, *(f"<extra_{i}>" for i in range(N_SENTINELS))]
    vocab = Vocab([*extras, *_words(), *places, *jobs, *people])
    return World(tuple(people), places, jobs, place, job, vocab)
