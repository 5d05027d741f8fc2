"""The phone's owner's address book, the same in every phone app for one seed: the dialer's
contacts and call log and the messages app's threads name the same people with the same
numbers, so a task can cross apps ("text back the caller you missed").

People come from several locales, each with its own names and its own number format, the
way a phone that has travelled holds them. Drawn from `random.Random(("phone-people",
seed))` (a string-seeded generator is the same in every process), never from an app's own
draws, so adding a draw to one app does not change the people of another.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

__all__ = ["OWNER_NUMBER", "Person", "digits", "phone_book", "same_number"]

#: The phone's own number (its SIM), shown in the settings' About phone.
OWNER_NUMBER = "+44 7700 900461"


@dataclass(frozen=True)
class Person:
    name: str
    number: str
    label: str  # mobile, home, work
    locale: str  # BCP 47 tag of the person's country


def _d(rng: random.Random, n: int) -> str:
    return "".join(str(rng.randint(0, 9)) for _ in range(n))


#: locale -> (first names, last names, a number in that country's written format)
LOCALES: dict[str, tuple[list[str], list[str], Callable[[random.Random], str]]] = {
    "en-GB": (["Oliver", "Amelia", "Harry", "Isla", "George", "Ava", "Noah", "Freya", "Arthur", "Poppy", "Leo", "Evie"],
              ["Smith", "Jones", "Taylor", "Brown", "Williams", "Wilson", "Evans", "Thomas", "Roberts", "Walker"],
              lambda r: f"+44 7{_d(r, 3)} {_d(r, 6)}"),
    "en-US": (["James", "Emma", "Liam", "Sophia", "Mason", "Mia", "Ethan", "Harper", "Lucas", "Ella"],
              ["Johnson", "Miller", "Davis", "Garcia", "Martinez", "Anderson", "Moore", "Jackson", "White", "Harris"],
              lambda r: f"+1 ({r.randint(201, 989)}) {r.randint(200, 999)}-{_d(r, 4)}"),
    "de-DE": (["Lukas", "Mia", "Jonas", "Hannah", "Felix", "Lea", "Maximilian", "Sophie", "Paul", "Marie"],
              ["Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Wagner", "Becker", "Hoffmann", "Schäfer", "Koch"],
              lambda r: f"+49 15{r.randint(1, 9)} {_d(r, 8)}"),
    "fr-FR": (["Lucas", "Chloé", "Hugo", "Léa", "Louis", "Manon", "Jules", "Camille", "Gabriel", "Inès"],
              ["Martin", "Bernard", "Dubois", "Thomas", "Robert", "Richard", "Petit", "Durand", "Leroy", "Moreau"],
              lambda r: f"+33 6 {_d(r, 2)} {_d(r, 2)} {_d(r, 2)} {_d(r, 2)}"),
    "es-ES": (["Lucía", "Hugo", "Martina", "Mateo", "Sofía", "Daniel", "Paula", "Pablo", "Carmen", "Álvaro"],
              ["García", "Fernández", "González", "Rodríguez", "López", "Martínez", "Sánchez", "Pérez", "Gómez", "Ruiz"],
              lambda r: f"+34 6{_d(r, 2)} {_d(r, 2)} {_d(r, 2)} {_d(r, 2)}"),
    "pt-BR": (["João", "Ana", "Pedro", "Beatriz", "Gustavo", "Larissa", "Rafael", "Juliana", "Thiago", "Camila"],
              ["Silva", "Santos", "Oliveira", "Souza", "Lima", "Pereira", "Costa", "Rodrigues", "Almeida", "Carvalho"],
              lambda r: f"+55 {r.randint(11, 99)} 9{_d(r, 4)}-{_d(r, 4)}"),
    "ja-JP": (["Haruto", "Yui", "Sota", "Aoi", "Ren", "Hina", "Yuto", "Sakura", "Riku", "Mei"],
              ["Sato", "Suzuki", "Takahashi", "Tanaka", "Watanabe", "Ito", "Yamamoto", "Nakamura", "Kobayashi", "Kato"],
              lambda r: f"+81 90-{_d(r, 4)}-{_d(r, 4)}"),
    "hi-IN": (["Aarav", "Ananya", "Vihaan", "Diya", "Arjun", "Saanvi", "Reyansh", "Aadhya", "Ishaan", "Kavya"],
              ["Sharma", "Verma", "Gupta", "Patel", "Reddy", "Iyer", "Nair", "Singh", "Kumar", "Mehta"],
              lambda r: f"+91 9{_d(r, 4)} {_d(r, 5)}"),
    "pl-PL": (["Jakub", "Zuzanna", "Antoni", "Julia", "Jan", "Maja", "Szymon", "Lena", "Filip", "Alicja"],
              ["Nowak", "Kowalski", "Wiśniewski", "Wójcik", "Kamiński", "Lewandowski", "Zieliński", "Szymański"],
              lambda r: f"+48 5{_d(r, 2)} {_d(r, 3)} {_d(r, 3)}"),
}
#: How often each locale appears: the owner lives in the UK.
WEIGHTS = {"en-GB": 6, "en-US": 2, "de-DE": 2, "fr-FR": 2, "es-ES": 2, "pt-BR": 1, "ja-JP": 1, "hi-IN": 2, "pl-PL": 1}
#: Businesses and services a phone holds beside people.
SERVICES = [("Dr Patel's Surgery", "+44 20 7946 0321", "work"), ("Bella Napoli Pizzeria", "+44 20 7946 0877", "work"),
            ("City Taxis", "+44 20 7946 0554", "work"), ("Voicemail", "+44 7700 900999", "mobile")]


def digits(number: str) -> str:
    """A number's dialable digits (a leading + kept): how two spellings of one number compare."""
    text = number.strip()
    return ("+" if text.startswith("+") else "") + "".join(ch for ch in text if ch.isdigit())


def same_number(a: str, b: str) -> bool:
    """Whether two spellings dial the same number, as a phone matches a caller to a contact:
    the same digits with or without the + (or the 00 that stands for it), or, for numbers
    of 9 digits or more, the same last 9 digits (a national 07700 900123 is +44 7700 900123)."""
    x, y = (digits(n).lstrip("+") for n in (a, b))
    x, y = (n[2:] if n.startswith("00") else n for n in (x, y))
    if not x or not y:
        return False
    return x == y or (min(len(x), len(y)) >= 9 and x[-9:] == y[-9:])


@cache
def phone_book(seed: int, size: int = 140) -> tuple[Person, ...]:
    """The owner's contacts for `seed`: `size` people of unique names and numbers, then the services."""
    rng = random.Random(f"phone-people-{seed}")
    locales = [loc for loc, w in WEIGHTS.items() for _ in range(w)]
    people: list[Person] = []
    names: set[str] = set()
    numbers: set[str] = set()
    while len(people) < size:
        loc = rng.choice(locales)
        firsts, lasts, number = LOCALES[loc]
        name = f"{rng.choice(firsts)} {rng.choice(lasts)}"
        num = number(rng)
        if name in names or digits(num) in numbers:
            continue
        names.add(name)
        numbers.add(digits(num))
        label = rng.choice(["mobile", "mobile", "mobile", "home", "work"])
        people.append(Person(name, num, label, loc))
    people += [Person(name, num, label, "en-GB") for name, num, label in SERVICES]
    return tuple(people)
