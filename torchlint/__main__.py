"""`python -m torchlint`: the command line."""

from torchlint.cli import main

raise SystemExit(main())
