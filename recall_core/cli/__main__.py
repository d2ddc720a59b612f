"""`python -m recall_core.cli`: the `recall` command."""

import sys

from . import main

sys.exit(main())
