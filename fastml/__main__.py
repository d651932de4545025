"""`python -m fastml` is the `fastml` command."""
import sys

from .cli import main

sys.exit(main())
