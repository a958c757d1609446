"""`python -m tgc_capture`: the tgc-capture command line (see cli.py)."""
import sys

from .cli import main

sys.exit(main())
