#!/usr/bin/env bash
# Everything cua needs on a fresh Debian 12 machine: system packages, a venv, the Python
# packages (all extras), CPU torch for the policy tests. Idempotent; safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  bubblewrap                                   # containers: user/network namespaces
  chromium chromium-headless-shell             # browser sandboxes (headless-shell preferred)
  chromium-driver                              # Farama MiniWoB (selenium), the peer in bench/miniwob_*.py and its parity test
  xvfb xdotool openbox xterm x11-utils xclip wmctrl   # desktop sandboxes
  xfwm4 xfce4-panel xfdesktop4 xfce4-settings xfconf gnome-themes-extra tango-icon-theme   # the xfce session and looks
  mousepad pcmanfm git                         # desktop apps (git for config tasks)
  libreoffice-calc libreoffice-writer libreoffice-impress gimp vlc thunderbird   # the office suite on the desktop kind
  python3-xlib python3-pil                     # the guest agent on the system Python
  python3-gi gir1.2-atspi-2.0 at-spi2-core dbus-daemon   # accessibility trees on desktops
  qemu-system-x86 qemu-utils debootstrap       # VM sandboxes and image recipes
  fonts-dejavu-core procps iproute2 ca-certificates
  # real products (cua.tasks.products): MediaWiki 1.39 on SQLite under `php -S`. php8.2-cgi and
  # micro-httpd satisfy its web-server dependencies without Apache (nothing is started: no inetd)
  mediawiki php-cli php-sqlite3 php-intl php-mbstring php-xml php8.2-cgi micro-httpd
  # Roundcube 1.6 on SQLite with Dovecot IMAP (tasks/products/roundcube): started per instance
  # with generated configurations; the packages' own services and database setup stay off
  roundcube-core roundcube-sqlite3 dovecot-imapd
)

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  # roundcube-core would make a system database through dbconfig-common: the instances make their own
  echo "roundcube-core roundcube/dbconfig-install boolean false" | $SUDO debconf-set-selections
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# Every pip call below resolves within the pins (scripts/constraints.txt); pip itself too.
export PIP_CONSTRAINT="$PWD/scripts/constraints.txt"
.venv/bin/python -m pip install -q "pip==$(sed -n 's/^pip==//p' scripts/constraints.txt)"
# torch first, pinned: a later unpinned requirement must not pull a CUDA build.
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[all]"
# BrowserGym's utilities, for the BrowserGym-compatible env's tests and users: without its
# pins (playwright==1.44 would replace ours, and its screenshots are slower), with what it imports.
.venv/bin/python -m pip install -q --no-deps "browsergym-core==0.14.3"
.venv/bin/python -m pip install -q "beautifulsoup4>=4.12" "lxml>=4.9,<6" "pyparsing>=3"
# The RL trainers' interfaces that cua's adapters implement (tests run against them), without
# their pins: verl and trl would replace torch and transformers. antlr4 4.9.3 is what
# hydra-core (verl's config loader, also a pytest plugin) parses with; a newer one breaks pytest.
.venv/bin/python -m pip install -q --no-deps "trl==1.16.0" "skyrl-gym==0.4.0" "verl==0.9.1" "tensordict==0.15.3" \
  "omegaconf==2.4.0" "hydra-core==1.3.8" "antlr4-python3-runtime==4.9.3" "codetiming==1.4.0" "pyvers==0.2.3"
.venv/bin/python -m pip install -q orjson cachetools cloudpickle
# OpenEnv (cua/hubs/openenv serves cua to its clients; tests use its own client and validator),
# without its pins: gradio (its optional web UI, never imported here) would downgrade pillow and
# tomlkit. What its server, client and `openenv validate` import comes within the pins.
.venv/bin/python -m pip install -q --no-deps "openenv-core==0.3.0"
.venv/bin/python -m pip install -q "fastmcp==4.2.3" "openai==3.63.0" "tomli==2.5.0" "tomli_w==1.2.0"
# Trac (tasks/products/trac) in a venv of its own: Trac 1.6 imports pkg_resources, which the
# setuptools pinned above no longer ships (scripts/requirements-trac.txt pins that venv).
TRAC_VENV="${CUA_CACHE_DIR:-$HOME/.cache/cua}/products/trac/venv"
[ -x "$TRAC_VENV/bin/python" ] || "$PYTHON" -m venv "$TRAC_VENV"
env -u PIP_CONSTRAINT "$TRAC_VENV/bin/python" -m pip install -q -r scripts/requirements-trac.txt
# Wagtail (tasks/products/wagtail) in a venv of its own: Wagtail 8 pins Django 5.2 and its own
# libraries (scripts/requirements-wagtail.txt pins that venv, waitress its server).
WAGTAIL_VENV="${CUA_CACHE_DIR:-$HOME/.cache/cua}/products/wagtail/venv"
[ -x "$WAGTAIL_VENV/bin/python" ] || "$PYTHON" -m venv "$WAGTAIL_VENV"
env -u PIP_CONSTRAINT "$WAGTAIL_VENV/bin/python" -m pip install -q -r scripts/requirements-wagtail.txt
# django-oscar (tasks/products/oscar) in a venv of its own: it pins Django and its own Django
# apps (scripts/requirements-oscar.txt pins that venv, waitress its server).
OSCAR_VENV="${CUA_CACHE_DIR:-$HOME/.cache/cua}/products/oscar/venv"
[ -x "$OSCAR_VENV/bin/python" ] || "$PYTHON" -m venv "$OSCAR_VENV"
env -u PIP_CONSTRAINT "$OSCAR_VENV/bin/python" -m pip install -q -r scripts/requirements-oscar.txt
# pretix (tasks/products/pretix) in a venv of its own: it pins Django, Celery and its own
# libraries (scripts/requirements-pretix.txt pins that venv, waitress its server); its wheel
# ships its compiled static files.
PRETIX_VENV="${CUA_CACHE_DIR:-$HOME/.cache/cua}/products/pretix/venv"
[ -x "$PRETIX_VENV/bin/python" ] || "$PYTHON" -m venv "$PRETIX_VENV"
env -u PIP_CONSTRAINT "$PRETIX_VENV/bin/python" -m pip install -q -r scripts/requirements-pretix.txt
# verifiers (cua/hubs/verifiers: `vf-eval cua-verifiers` plays cua tasks on `cua openenv serve`) in
# a venv of its own (scripts/requirements-verifiers.txt pins it). cua and the plugin module go in
# editable without their dependencies (the pins carry what the environment imports), and
# openenv-core, whose websocket client it uses, without its gradio, as in the kit's venv.
VERIFIERS_VENV="${CUA_CACHE_DIR:-$HOME/.cache/cua}/hubs/verifiers/venv"
[ -x "$VERIFIERS_VENV/bin/python" ] || "$PYTHON" -m venv "$VERIFIERS_VENV"
env -u PIP_CONSTRAINT "$VERIFIERS_VENV/bin/python" -m pip install -q -r scripts/requirements-verifiers.txt
env -u PIP_CONSTRAINT "$VERIFIERS_VENV/bin/python" -m pip install -q --no-deps "openenv-core==0.3.0" -e . -e integrations/verifiers
echo "setup: done ($(.venv/bin/python -c 'import cua; print("cua", cua.__version__)'))"
