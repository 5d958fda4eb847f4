"""The training path every objective shares: the framework entry points and the gradient call
(:mod:`.pair_objective`), the training set's derived data (:mod:`.training_set`), the pair
kernel (:mod:`.lambda_kernel`), XGBoost's side (:mod:`.xgboost_gradients`), and a training set
split across machines (:mod:`.shards`, :mod:`.dask_ranks`). :mod:`lgb_risk.objectives` defines
the objectives on top of it."""
