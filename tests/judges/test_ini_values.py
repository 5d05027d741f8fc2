"""The `ini` value type (`cua.judges.values.config`): a configuration file judged as the
settings it holds. Both sides of its stated equivalence class as properties (hypothesis
writes the same settings with other spacing, `:` for `=`, key case, comments, blank
lines and order: they pass; another value, an added, missing or moved key, a key or
section written twice, text that does not parse: they fail), and the desktop template
that compared such a file as whole text (`desktop.ini_setting`)."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from cua.judges import spec as S
from cua.judges.comparators import compare
from cua.judges.getters import build_getter
from cua.judges.judge import StateJudge
from cua.judges.values import Refused, compare_as, parse_as
from cua.state import StateResult
from cua.task import JudgeInput
from cua.tasks.registry import get_template

CMP: TypeAdapter[S.ComparatorSpec] = TypeAdapter(S.ComparatorSpec)
FAST = settings(max_examples=80, deadline=None)
CHECK = "only that setting changed"

Settings = dict[str, dict[str, str]]

names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
section_names = st.from_regex(r"[A-Za-z][A-Za-z0-9_.-]{0,8}", fullmatch=True)
values = st.from_regex(r"[A-Za-z0-9./,_@%+-]([A-Za-z0-9./,_@%+ =:-]{0,12}[A-Za-z0-9./,_@%+=:-])?", fullmatch=True)
files: st.SearchStrategy[Settings] = st.dictionaries(section_names, st.dictionaries(names, values, min_size=1, max_size=5),
                                                     min_size=1, max_size=3)


def plain(doc: Settings) -> str:
    """The settings as the generator writes them: `key = value`, a blank line between sections."""
    return "\n".join(f"[{s}]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items()) for s, keys in doc.items())


def respelled(doc: Settings, rng: random.Random) -> str:
    """The same settings written another way: sections and keys shuffled, keys in another
    case, `=`/`:` with any spacing, comment and blank lines between them."""
    out = ["# written by hand", "; and commented", ""]
    sections = list(doc.items())
    rng.shuffle(sections)
    for name, keys in sections:
        out.append(f"[{name}]")
        items = list(keys.items())
        rng.shuffle(items)
        for key, value in items:
            key = rng.choice((key, key.upper(), key.capitalize()))
            out.append(key + rng.choice(("=", " = ", "  =\t", ":", " : ", "= ")) + value + rng.choice(("", " ", "\t")))
            if rng.random() < 0.3:
                out.append(rng.choice(("", "# a note", "; another note", "   ")))
        out.append("")
    return "\n".join(out)


def same(observed: object, expected: object) -> bool:
    return compare_as("ini", observed, expected)[0]


@FAST
@given(files, st.randoms(use_true_random=False))
def test_the_same_settings_written_another_way_pass(doc: Settings, rng: random.Random) -> None:
    other = respelled(doc, rng)
    assert same(other, plain(doc)), other
    assert same(plain(doc), other)
    spec = CMP.validate_python({"op": "equals", "value": plain(doc), "type": "ini"})
    assert compare(spec, other)[0]


@FAST
@given(files, st.data())
def test_settings_just_outside_fail(doc: Settings, data: st.DataObject) -> None:
    expected = plain(doc)
    section = data.draw(st.sampled_from(sorted(doc)))
    key = data.draw(st.sampled_from(sorted(doc[section])))
    value = doc[section][key]

    def edited(change: dict[str, str | None], where: str = section) -> str:
        return plain({s: ({k: v for k, v in {**keys, **change}.items() if v is not None} if s == where else keys)
                      for s, keys in doc.items()})

    near = {
        "another value": edited({key: value + "x"}),
        "the value in another case": edited({key: value.swapcase()}) if value.swapcase() != value else None,
        "an added key": edited({key + "_extra": value}),
        "a key missing": edited({key: None}),
        "a section added": expected + "\n[zz_added]\nkey = 1\n",
        "a section missing": plain({s: keys for s, keys in doc.items() if s != section}),
        "the key twice, another value": expected.replace(f"{key} = {value}\n", f"{key} = {value}\n{key} = {value}x\n", 1),
        "the key twice, the same value": expected.replace(f"{key} = {value}\n", f"{key} = {value}\n{key.upper()}={value}\n", 1),
        "a section twice": expected + f"\n[{section}]\n",
        "a line outside any section": f"{key} = {value}\n" + expected,
        "a key without a value": expected + f"{key}_bare\n",
    }
    for what, text in near.items():
        if text is not None:
            assert not same(text, expected), (what, text)
    assert not same(None, expected) and not same([expected], expected)


def test_a_duplicate_or_unreadable_file_is_refused_with_its_reason() -> None:
    twice = parse_as("ini", "[editor]\ntheme = dark\nTheme = light\n")
    assert isinstance(twice, Refused) and "twice" in twice.reason
    assert isinstance(parse_as("ini", "[a]\nx = 1\n[a]\ny = 2\n"), Refused)
    assert isinstance(parse_as("ini", "theme = dark\n"), Refused)
    ok, detail = compare_as("ini", "[editor]\ntheme=dark\nfont=12\n", "[editor]\ntheme = light\n")
    assert not ok and "theme = 'dark', expected 'light'" in detail and "font added" in detail
    # no section name is special: [DEFAULT] does not hand its keys to the other sections
    assert not same("[DEFAULT]\nx = 1\n[a]\n", "[a]\nx = 1\n")
    # a value is text: % is not interpolation, full-width letters are not ASCII ones
    assert same("[a]\nratio=50%\n", "[a]\nratio = 50%\n")
    assert not same("[a]\ntheme = \uff44\uff41\uff52\uff4b\n", "[a]\ntheme = dark\n")


def _task_check(seed: int) -> tuple[StateJudge, str, dict[str, Any]]:
    """desktop.ini_setting's judge, the key of the file its check reads, and the generator's values."""
    instance = get_template("desktop.ini_setting@1").instantiate(seed)
    checks = [c for c in instance.judge.spec.checks if isinstance(c, S.CheckNode)]
    assert len(checks) == 1 and checks[0].check == CHECK
    return instance.judge, build_getter(checks[0].get).key, instance.params


def test_the_ini_setting_task_passes_key_equals_new_and_fails_the_near_edits() -> None:
    for seed in range(4):
        judge, key, p = _task_check(seed)
        start: str = p["files"][".config/editor/settings.ini"]

        def verdict(text: str) -> bool:
            # the file check's own evidence: the manifest of the other files is the files probes' to test
            evidence = judge.evaluate(JudgeInput(final={key: StateResult(value=text)})).evidence
            return next(e.passed for e in evidence if e.check == CHECK)

        k, old, new = p["key"], p["old"], p["new"]
        assert verdict(p["expected"])
        # the outside probe: sed 's/^key = old$/key=new/' (the same setting, written tight)
        assert verdict(start.replace(f"{k} = {old}\n", f"{k}={new}\n", 1))
        assert verdict("# edited by hand\n" + start.replace(f"{k} = {old}\n", f"{k.upper()} : {new}\n\n", 1))
        # the near miss: every `= old` replaced, the decoy in [backup] too
        assert not verdict(start.replace(f"= {old}\n", f"= {new}\n"))
        assert not verdict(start)
        assert not verdict(p["expected"] + "wrap = true\n")  # an added setting in [backup]
        assert not verdict(p["expected"].replace(f"{k} = {new}\n", f"{k} = {new}\n{k}={old}\n", 1))
