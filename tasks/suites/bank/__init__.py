"""The bank suite: templates over the bundled online bank (tasks/apps/bank)."""
