"""``python -m lgb_risk.cli``: the ``lgb-risk`` command."""

from lgb_risk.cli import console_main

console_main()
