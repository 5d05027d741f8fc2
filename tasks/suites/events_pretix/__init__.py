"""The events_pretix suite: pretix (tasks/products/pretix) as the sandbox's app."""
