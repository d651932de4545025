"""`python -m fastml` is the `fastml` command. Importing this module runs nothing."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
