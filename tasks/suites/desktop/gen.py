"""Seeded parameters for the desktop suite: the files each variant starts with, the values
its judge expects, and the shell lines its oracle and near miss type.

Each function is a template's `generator` (called as `fn(None, rng)`: desktop tasks have
no app). Everything comes from `rng`, so a template and seed give the same variant on
every machine. Words are plain ASCII without shell metacharacters, so typed command
lines need no quoting beyond single quotes.
"""

from __future__ import annotations

import random
from typing import Any

WORDS = ("apple", "birch", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper", "kestrel",
         "lagoon", "meadow", "nectar", "orchid", "pepper", "quartz", "raven", "saffron", "tundra", "umber", "violet",
         "willow", "xenon", "yarrow", "zephyr")
NAMES = ("alice", "bruno", "chen", "dana", "emeka", "farah", "goran", "hana", "ivan", "jonas", "keiko", "lena")


def _words(rng: random.Random, n: int) -> list[str]:
    return rng.sample(WORDS, n)


def _sentence(rng: random.Random, n: int = 5) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


# --- files ---

def create_file(_: Any, rng: random.Random) -> dict[str, Any]:
    name, other = _words(rng, 2)
    text = _sentence(rng, 4)
    return {"name": name, "text": text, "files": {},
            "oracle_sh": f"printf '%s\\n' '{text}' > {name}.txt",
            "near_sh": f"printf '%s\\n' '{text}' > {other}.txt"}


def rename_file(_: Any, rng: random.Random) -> dict[str, Any]:
    old, new = _words(rng, 2)
    content = _sentence(rng, 6) + "\n"
    return {"old": old, "new": new, "content": content, "files": {f"{old}.txt": content},
            "oracle_sh": f"mv {old}.txt {new}.txt", "near_sh": f"cp {old}.txt {new}.txt"}


def move_into_folder(_: Any, rng: random.Random) -> dict[str, Any]:
    folder = rng.choice(("archive", "done", "old-reports", "backup"))
    n, m = rng.sample(range(1, 10), 2)
    files = {f"report-{i}.txt": f"report {i}: {_sentence(rng, 3)}\n" for i in (n, m)}
    files[f"{folder}/README"] = "reports go here\n"
    return {"folder": folder, "n": n, "m": m, "files": files, "content": files[f"report-{n}.txt"],
            "oracle_sh": f"mv report-{n}.txt {folder}/", "near_sh": f"mv report-{m}.txt {folder}/"}


def make_tree(_: Any, rng: random.Random) -> dict[str, Any]:
    a, b, c = _words(rng, 3)
    return {"a": a, "b": b, "c": c, "files": {},
            "oracle_sh": f"mkdir -p {a}/{b}/{c}", "near_sh": f"mkdir -p {a}/{b}"}


def search_content(_: Any, rng: random.Random) -> dict[str, Any]:
    names = _words(rng, 6)
    code = f"{rng.choice(WORDS).upper()}-{rng.randint(1000, 9999)}"
    target = rng.randrange(len(names))
    files = {}
    for i, name in enumerate(names):
        lines = [_sentence(rng, 6) for _ in range(rng.randint(3, 8))]
        if i == target:
            lines.insert(rng.randrange(len(lines)), f"the code is {code}")
        files[f"notes/{name}.txt"] = "\n".join(lines) + "\n"
    wrong = names[(target + 1) % len(names)]
    return {"code": code, "answer": f"{names[target]}.txt", "files": files,
            "oracle_sh": f"grep -l {code} notes/*.txt", "oracle_answer": f"{names[target]}.txt",
            "near_sh": "ls notes", "near_answer": f"{wrong}.txt"}


def copy_matching(_: Any, rng: random.Random) -> dict[str, Any]:
    names = _words(rng, 6)
    files: dict[str, str] = {}
    errors: list[str] = []
    for name in names:
        lines = [f"INFO {_sentence(rng, 3)}" for _ in range(rng.randint(2, 5))]
        if rng.random() < 0.5 or (not errors and name == names[-1]):
            lines.insert(rng.randrange(len(lines) + 1), f"ERROR {_sentence(rng, 2)}")
            errors.append(f"{name}.log")
        files[f"logs/{name}.log"] = "\n".join(lines) + "\n"
    if len(errors) == len(names):  # keep at least one clean log, so "copy all" is wrong
        files[f"logs/{names[0]}.log"] = "INFO all good\n"
        errors.remove(f"{names[0]}.log")
    return {"errors": sorted(errors), "files": files,
            "oracle_sh": ["mkdir -p errors", "cp $(grep -l ERROR logs/*.log) errors/"],
            "near_sh": "mkdir -p errors && cp logs/*.log errors/"}


def delete_only(_: Any, rng: random.Random) -> dict[str, Any]:
    names = _words(rng, 5)
    victim = names[0]
    files = {f"downloads/{n}.tmp": f"{n}\n" for n in names}
    files["downloads/keep.pdf"] = "%PDF-1.4 not really\n"
    remaining = sorted([f"{n}.tmp" for n in names[1:]] + ["keep.pdf"])
    return {"victim": victim, "remaining": remaining, "files": files,
            "oracle_sh": f"rm downloads/{victim}.tmp", "near_sh": "rm downloads/*.tmp"}


def count_lines(_: Any, rng: random.Random) -> dict[str, Any]:
    name = rng.choice(("sales", "visits", "orders", "signups"))
    n = rng.randint(8, 40)
    rows = ["date,region,amount"] + [f"2026-03-{1 + i % 28:02d},{rng.choice(('north', 'south', 'east'))},"
                                     f"{rng.randint(5, 900)}" for i in range(n - 1)]
    return {"name": name, "n": n, "files": {f"data/{name}.csv": "\n".join(rows) + "\n"},
            "oracle_sh": f"wc -l data/{name}.csv", "oracle_answer": str(n),
            "near_sh": f"tail -n +2 data/{name}.csv | wc -l", "near_answer": str(n - 1)}


# --- terminal ---

def sort_unique(_: Any, rng: random.Random) -> dict[str, Any]:
    pool = _words(rng, 8)
    lines = [rng.choice(pool) for _ in range(14)]
    while len(set(lines)) == len(lines):
        lines.append(lines[0])
    expected = "\n".join(sorted(set(lines))) + "\n"
    return {"files": {"words.txt": "\n".join(lines) + "\n"}, "expected": expected,
            "oracle_sh": "sort -u words.txt > sorted.txt", "near_sh": "sort words.txt > sorted.txt"}


def count_words(_: Any, rng: random.Random) -> dict[str, Any]:
    lines = [_sentence(rng, rng.randint(3, 9)) for _ in range(rng.randint(3, 7))]
    text = "\n".join(lines) + "\n"
    return {"files": {"essay.txt": text}, "n": len(text.split()), "lines": len(lines),
            "oracle_sh": "wc -w < essay.txt > count.txt", "near_sh": "wc -l < essay.txt > count.txt"}


#: `SHELL_ENV_READER VAR` (run as `/usr/bin/python3 -I -S -c`): the value of VAR in the
#: environment a new interactive bash passes to the programs it starts; prints nothing and
#: exits 1 when VAR is not exported there. Threat model: ~/.bashrc is the agent's code, and
#: anything the shell prints can be forged by it (a `printf` or `exec` function, a DEBUG trap,
#: an echo then `exit`). So the shell's output is never read: the shell is asked to exec
#: /bin/sleep with a fresh random argument, and the kernel's record of that process
#: (/proc/PID/exe, cmdline and environ, same pid) is read from outside. A shell that never
#: execs the sleep, or execs something else, gives no value. Left open: an rc file that
#: recognises this command line and exports the variable only for it.
SHELL_ENV_READER = r"""
import os, signal, subprocess, sys, time
var, nonce = sys.argv[1], '%d.%06d' % (3600, int.from_bytes(os.urandom(3), 'big') % 1000000)
sleep = os.path.realpath('/bin/sleep')
env = {k: v for k, v in os.environ.items() if k != var}
shell = subprocess.Popen(['/bin/bash', '-ic', 'exec /bin/sleep ' + nonce], env=env, cwd=os.path.expanduser('~'),
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
environ = None
deadline = time.monotonic() + 8
try:
    while environ is None and shell.poll() is None and time.monotonic() < deadline:
        try:
            proc = '/proc/%d/' % shell.pid
            if os.readlink(proc + 'exe') == sleep:
                with open(proc + 'cmdline', 'rb') as f:
                    cmdline = f.read().split(b'\0')[:-1]
                with open(proc + 'environ', 'rb') as f:
                    found = f.read()
                if os.readlink(proc + 'exe') == sleep and cmdline[1:] == [nonce.encode()]:
                    environ = found
                    break
        except OSError:
            pass
        time.sleep(0.01)
finally:
    try:
        os.killpg(shell.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    shell.wait()
if environ is None:
    sys.exit('a new interactive bash did not run the probe it was given (its rc file ran something else)')
for entry in environ.split(b'\0'):
    name, sep, value = entry.partition(b'=')
    if sep and name == var.encode():
        sys.stdout.write(value.decode('utf-8', 'replace'))
        sys.exit(0)
sys.exit(1)
"""


def env_var(_: Any, rng: random.Random) -> dict[str, Any]:
    var = rng.choice(("PROJECT_HOME", "EDITOR_THEME", "BUILD_MODE", "API_REGION"))
    value = rng.choice(WORDS)
    return {"var": var, "value": value, "files": {".bashrc": "# ~/.bashrc\nalias ll='ls -l'\n"},
            "reader": SHELL_ENV_READER,
            "oracle_sh": f"echo 'export {var}={value}' >> ~/.bashrc",
            "near_sh": f"export {var}={value}"}


def tail_lines(_: Any, rng: random.Random) -> dict[str, Any]:
    n = rng.randint(3, 6)
    lines = [f"{10 + i:02d}:{rng.randint(0, 59):02d} {rng.choice(('GET', 'POST'))} /{rng.choice(WORDS)} "
             f"{rng.choice((200, 200, 404, 500))}" for i in range(rng.randint(12, 20))]
    return {"n": n, "files": {"server.log": "\n".join(lines) + "\n"},
            "expected": "\n".join(lines[-n:]) + "\n",
            "oracle_sh": f"tail -n {n} server.log > tail.txt", "near_sh": f"head -n {n} server.log > tail.txt"}


def largest_file(_: Any, rng: random.Random) -> dict[str, Any]:
    names = _words(rng, 5)
    sizes = rng.sample(range(20, 400), len(names))
    files = {f"media/{n}.dat": "x" * s for n, s in zip(names, sizes)}
    big = names[sizes.index(max(sizes))]
    small = names[sizes.index(min(sizes))]
    return {"files": files, "big": f"{big}.dat",
            "oracle_sh": "ls -S media | head -n 1 > biggest.txt",
            "near_sh": "ls -Sr media | head -n 1 > biggest.txt", "small": f"{small}.dat"}


def archive(_: Any, rng: random.Random) -> dict[str, Any]:
    names = _words(rng, 3)
    files = {f"photos/{n}.jpg": f"not really a jpeg: {n}\n" for n in names}
    return {"files": files, "names": [f"photos/{n}.jpg" for n in names],
            "oracle_sh": "tar czf photos.tar.gz photos", "near_sh": "tar cf photos.tar.gz photos"}


def make_executable(_: Any, rng: random.Random) -> dict[str, Any]:
    name = rng.choice(("run", "deploy", "backup", "build"))
    return {"name": name, "files": {f"{name}.sh": f"#!/bin/sh\necho {rng.choice(WORDS)}\n"},
            "oracle_sh": f"chmod +x {name}.sh", "near_sh": f"chmod 640 {name}.sh"}


# --- settings in config files ---

def ini_setting(_: Any, rng: random.Random) -> dict[str, Any]:
    keys = ["theme", "font_size", "autosave", "language", "tab_width"]
    values = {"theme": rng.choice(("dark", "light")), "font_size": str(rng.choice((10, 12, 14))),
              "autosave": "true", "language": rng.choice(("en", "de", "fr")), "tab_width": "4"}
    key = rng.choice(["theme", "font_size", "language"])
    new = {"theme": {"dark": "light", "light": "dark"}[values["theme"]],
           "font_size": str(int(values["font_size"]) + 2), "language": "es"}[key]
    # another key shares the old value, so a blind global replace is wrong
    decoy = "backup_" + key
    lines = ["[editor]", *(f"{k} = {values[k]}" for k in keys), "", "[backup]", f"{decoy} = {values[key]}"]
    text = "\n".join(lines) + "\n"
    expected = text.replace(f"{key} = {values[key]}\n", f"{key} = {new}\n", 1)
    old = values[key]
    return {"key": key, "old": old, "new": new, "files": {".config/editor/settings.ini": text},
            "expected": expected,
            "oracle_sh": f"sed -i 's/^{key} = {old}$/{key} = {new}/' .config/editor/settings.ini",
            "near_sh": f"sed -i 's/= {old}$/= {new}/' .config/editor/settings.ini"}


def xresources(_: Any, rng: random.Random) -> dict[str, Any]:
    size = rng.choice((13, 14, 15, 16, 18))
    return {"size": size, "files": {".Xresources": "XTerm*background: black\nXTerm*foreground: grey90\n"},
            "oracle_sh": f"echo 'XTerm*faceSize: {size}' >> .Xresources",
            "near_sh": f"echo 'XTerm*faceSize: {size + 1}' >> .Xresources"}


OPENBOX_RC = """<?xml version="1.0" encoding="UTF-8"?>
<openbox_config xmlns="http://openbox.org/3.4/rc">
  <desktops>
    <number>{desktops}</number>
    <firstdesk>1</firstdesk>
  </desktops>
  <margins>
    <top>0</top>
    <bottom>0</bottom>
  </margins>
  <theme>
    <name>Clearlooks</name>
  </theme>
</openbox_config>
"""


def openbox_desktops(_: Any, rng: random.Random) -> dict[str, Any]:
    n = rng.randint(2, 9)
    new = rng.choice([k for k in range(2, 10) if k != n])
    return {"n": n, "new": new, "files": {".config/openbox/rc.xml": OPENBOX_RC.format(desktops=n)},
            "oracle_sh": f"sed -i 's|<number>{n}</number>|<number>{new}</number>|' .config/openbox/rc.xml",
            "near_sh": f"sed -i 's|<firstdesk>1</firstdesk>|<firstdesk>{new}</firstdesk>|' .config/openbox/rc.xml"}


def git_identity(_: Any, rng: random.Random) -> dict[str, Any]:
    first, last = rng.choice(NAMES).title(), rng.choice(WORDS).title()
    name = f"{first} {last}"
    email = f"{first.lower()}@example.org"
    return {"name": name, "email": email, "files": {},
            "oracle_sh": f"git config --global user.name '{name}' && git config --global user.email '{email}'",
            "near_sh": f"git config --global user.name '{name}'"}


def clipboard_file(_: Any, rng: random.Random) -> dict[str, Any]:
    secret = f"{rng.choice(WORDS)}-{rng.randint(100000, 999999)}"
    decoy = f"{rng.choice(WORDS)}-{rng.randint(100000, 999999)}"
    return {"secret": secret, "files": {"token.txt": secret, "old-token.txt": decoy},
            "oracle_sh": "xclip -selection clipboard < token.txt",
            "near_sh": "xclip -selection clipboard < old-token.txt"}


def open_in_editor(_: Any, rng: random.Random) -> dict[str, Any]:
    names = _words(rng, 3)
    files = {f"{n}.txt": f"{_sentence(rng, 5)}\n" for n in names}
    return {"name": names[0], "files": files,
            "oracle_sh": f"(mousepad {names[0]}.txt &)", "near_sh": f"(mousepad {names[1]}.txt &)"}


def infeasible_print(_: Any, rng: random.Random) -> dict[str, Any]:
    printer = rng.choice(("Office-2F", "HP-LaserJet-Lobby", "Canon-Finance"))
    return {"printer": printer, "files": {"report.txt": f"{_sentence(rng, 8)}\n"},
            "oracle_status": "infeasible", "near_sh": "cat report.txt"}


# --- the text editor ---

def _doc(rng: random.Random, n: int) -> list[str]:
    return [f"{i + 1}. {_sentence(rng, 4)}" for i in range(n)]


def editor_append(_: Any, rng: random.Random) -> dict[str, Any]:
    lines = _doc(rng, rng.randint(3, 6))
    line = f"{len(lines) + 1}. {_sentence(rng, 3)}"
    text = "\n".join(lines) + "\n"
    return {"file": "notes.txt", "line": line, "files": {"notes.txt": text}, "expected": text + line + "\n"}


def editor_insert_top(_: Any, rng: random.Random) -> dict[str, Any]:
    lines = _doc(rng, rng.randint(3, 6))
    title = f"Draft: {_sentence(rng, 2).title()}"
    text = "\n".join(lines) + "\n"
    return {"file": "draft.txt", "line": title, "files": {"draft.txt": text}, "expected": f"{title}\n{text}"}


def editor_delete_line(_: Any, rng: random.Random) -> dict[str, Any]:
    n = rng.randint(4, 7)
    lines = [f"[ ] {w}" for w in _words(rng, n)]
    index = rng.randrange(1, n)
    word = lines[index][4:]
    expected = "\n".join(lines[:index] + lines[index + 1:]) + "\n"
    return {"file": "todo.txt", "word": word, "index": index, "wrong_index": index - 1, "n_lines": n,
            "files": {"todo.txt": "\n".join(lines) + "\n"}, "expected": expected}


def editor_copy_line(_: Any, rng: random.Random) -> dict[str, Any]:
    lines = [f"{w}: {rng.randint(10, 99)} {rng.choice(('kg', 'km', 'items'))}" for w in _words(rng, 5)]
    index = rng.randrange(1, len(lines))
    return {"file": "list.txt", "index": index, "wrong_index": index - 1, "n": index + 1, "line": lines[index],
            "files": {"list.txt": "\n".join(lines) + "\n"}}


def editor_replace(_: Any, rng: random.Random) -> dict[str, Any]:
    old, new = (w.title() for w in _words(rng, 2))
    sentences = [f"{_sentence(rng, 3)} {old} {_sentence(rng, 2)}." for _ in range(3)]
    text = f"Dear {old},\n" + "\n".join(sentences) + f"\nRegards, {rng.choice(NAMES).title()}\n"
    return {"file": "letter.txt", "old": old, "new": new, "files": {"letter.txt": text},
            "expected": text.replace(old, new), "count": text.count(old)}


def browser_copy(_: Any, rng: random.Random) -> dict[str, Any]:
    order = f"ORD-{rng.randint(100000, 999999)}"
    decoy = f"ORD-{rng.randint(100000, 999999)}"
    title = f"Order {rng.choice(WORDS).title()}"
    page = (f"<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>"
            f"<p>Thank you for your purchase.</p><p>Your order number: <b id=order>{order}</b></p>"
            f"<p><small>Previous order: {decoy}</small></p></body></html>")
    return {"order": order, "decoy": decoy, "page_title": title, "files": {"order.html": page},
            "oracle_sh": "xclip -o -selection clipboard | grep -o 'order number: ORD-[0-9]*' "
                         "| grep -o 'ORD-[0-9]*' > order.txt",
            "near_sh": "xclip -o -selection clipboard | grep -o 'ORD-[0-9]*' | tail -n 1 > order.txt"}


# --- the file manager ---

def fm_new_folder(_: Any, rng: random.Random) -> dict[str, Any]:
    name = f"{rng.choice(WORDS)}-{rng.choice(('2026', 'drafts', 'photos', 'notes'))}"
    return {"name": name, "wrong": f"{name}s", "files": {"docs/readme.txt": "hello\n"}}
