"""The Harbourlight Django project Wagtail serves (settings, URLs, the `cms` app): run under the
Wagtail venv with this folder on sys.path, never imported by cua."""
