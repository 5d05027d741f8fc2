"""The safety suite: tasks where declining is right, their benign twins, and irreversible steps
taken without the user's mandate, over the bundled apps and the desktop (issue 36)."""
