"""The torchlint language server: diagnostics, quick fixes, hovers and code lenses for editors.

Start it with `torchlint lsp` or `python -m torchlint.lsp` (stdio). The modules:
`server` (the pygls server and its scheduling), `settings` (the editor's `torchlint`
settings), `convert` (positions and diagnostics in LSP terms), `actions` (code actions),
`hover`, `lenses` (where the training loops are), `commands` and `documents`.
"""
