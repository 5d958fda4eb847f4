"""``python -m lgb_risk``: the ``lgb-risk`` command."""

from lgb_risk.cli import console_main

console_main()
