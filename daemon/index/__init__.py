"""The code index: per workspace, each source file's definitions and references
(tree-sitter), kept warm by the daemon and in the state folder, shared by every
session on the workspace; the repo map and `find_symbol` read it."""
