"""Built-in tools (read, bash, grep, find, ls, edit, write), their contract and their registry."""
