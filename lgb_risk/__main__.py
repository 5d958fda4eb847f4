"""``python -m lgb_risk``: the ``lgb-risk`` command."""

import sys

from lgb_risk.cli import main

sys.exit(main())
