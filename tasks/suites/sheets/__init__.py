"""The sheets suite: templates over the bundled spreadsheet app (tasks/apps/sheets)."""
