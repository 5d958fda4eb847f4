"""The figures' print style: figures as a paper prints them (:mod:`.printing`), their font
(:mod:`.print_font`), and figures that show themselves in a notebook (:mod:`.shown_figure`)."""
