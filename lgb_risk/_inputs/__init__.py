"""The ground floor: how a parameter is declared and checked (:mod:`.parameters`), the input
checks every module shares (:mod:`.validation`), the rows a scikit-learn estimator takes
(:mod:`.rows`), and the public API's type aliases (:mod:`.type_aliases`)."""
