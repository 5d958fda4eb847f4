"""Where the work runs: the machine's cores (:mod:`.machine`), threads over queries
(:mod:`.query_threads`), forked processes (:mod:`.forked`), Ctrl-C inside a kernel
(:mod:`.interrupt`), progress bars (:mod:`.progress`), and Dask (:mod:`.dask_client`,
:mod:`.worker_server`)."""
