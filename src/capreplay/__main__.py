"""``python -m capreplay`` runs the command line."""

from capreplay.cli import main

raise SystemExit(main())
