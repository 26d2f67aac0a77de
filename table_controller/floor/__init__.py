"""The floor dashboard (issue 14): every table, the open alerts, search and the shift report."""
