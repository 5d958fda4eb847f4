"""Reading and writing files: text lines (:mod:`.text`), the LETOR/SVMlight reader
(:mod:`.letor`), keys of (topic, document) pairs for runs and judgments (:mod:`.pair_keys`), and
atomic writes (:mod:`.atomic`)."""
