"""`python -m crest`: the same entry point as the `crest` console script."""

from crest.cli.main import main

raise SystemExit(main())
