"""Where the work runs: the machine's cores (:mod:`.machine`), the compiled kernels' calls on
threads over queries and under Ctrl-C (:mod:`.kernel_calls`), forked processes (:mod:`.forked`),
progress bars (:mod:`.progress`), and Dask (:mod:`.dask_client`, :mod:`.worker_server`)."""
