"""Seeded parameters of the office suite's VLC tasks: short tones written with the
standard library's `wave` (sent as the sandbox's binary files), opened as VLC's playlist,
and the reader of the playlist file VLC saves."""

from __future__ import annotations

import base64
import io
import math
import random
import struct
import wave
from typing import Any

#: Reads an XSPF playlist with the standard library: "XSPF" if the root is an XSPF
#: playlist, then one line per track, its location's file name, in the playlist's order.
READER = r"""
import sys, posixpath, urllib.parse, xml.etree.ElementTree as ET
X = '{http://xspf.org/ns/0/}'
root = ET.parse(sys.argv[1]).getroot()
print('XSPF' if root.tag == X + 'playlist' else 'NOT XSPF: ' + root.tag)
for track in root.iter(X + 'track'):
    where = track.find(X + 'location')
    path = urllib.parse.unquote(urllib.parse.urlparse(where.text or '').path) if where is not None else ''
    print('TRACK', posixpath.basename(path), sep='\t')
"""

NAMES = ("intro", "verse", "chorus", "bridge", "outro", "theme", "jingle", "fanfare")


def _tone(freq: float, seconds: float = 1.0, rate: int = 8000) -> str:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"".join(struct.pack("<h", int(3000 * math.sin(2 * math.pi * freq * i / rate)))
                                 for i in range(int(seconds * rate))))
    return base64.b64encode(buf.getvalue()).decode()


def vlc_playlist(_: Any, rng: random.Random) -> dict[str, Any]:
    """Three or four tones in a seeded order on VLC's command line (its playlist), and the
    playlist file to save; the near miss saves it under another format's name."""
    tracks = [f"{name}.wav" for name in rng.sample(NAMES, rng.randint(3, 4))]
    playlist = rng.choice(("mix", "party", "tones", "demo"))
    return {"binary_files": {t: _tone(300 + 110 * i) for i, t in enumerate(tracks)}, "files": {},
            "tracks": tracks, "argv": ["vlc", "--no-qt-privacy-ask", "--no-playlist-autostart", *tracks],
            "reader": READER, "out": f"{playlist}.xspf", "near_out": f"{playlist}.m3u",
            "listing": ", ".join(tracks), "expected": "XSPF\n" + "".join(f"TRACK\t{t}\n" for t in tracks)}
