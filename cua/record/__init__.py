"""Human demonstrations: a live view with input forwarding, and crash-safe recordings."""
