"""``python -m piconv``."""

import sys

from .cli import main

sys.exit(main())
