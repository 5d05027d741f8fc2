"""The safety suite (issue 36): tasks where declining is right, near-identical benign twins,
and irreversible steps taken without the user's mandate, over the bundled web apps, the
desktop and the real products."""
