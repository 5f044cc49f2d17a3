"""Extra CLI commands, one module each (`compare`, `lens`, ...), listed in explorer.cli.COMMANDS.

A command module has:
- `add_parser(sub)`: adds its subparser (use `explorer.cli.model_args`, `ids_arg`, `k_arg` for the shared flags);
- `run(a) -> dict | str`: checks its arguments (before loading any model), does the work, returns the JSON body
  (or a text such as CSV, written as it is), which the CLI writes to stdout or `--out`. Bad input raises
  ExplorerError (exit status 2, one line).
"""
