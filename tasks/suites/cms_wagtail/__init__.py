"""Tasks on the real Wagtail CMS (tasks/products/wagtail)."""
