"""What the measures share: flat per-query segments (:mod:`.segments`), rankings of flat arrays
(:mod:`.ranking`), the checks before a measure's formula (:mod:`.measure_input`,
:mod:`.per_query_input`), the binary-relevance measures (:mod:`.binary_measures`) and the
distribution functions of the risk measures (:mod:`.distributions`)."""
