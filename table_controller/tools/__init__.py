"""Command-line tools: the stud-table subcommands beside the daemon."""
