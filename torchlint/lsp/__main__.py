"""`python -m torchlint.lsp`: the language server over stdio."""

from torchlint.lsp.server import main

raise SystemExit(main())
