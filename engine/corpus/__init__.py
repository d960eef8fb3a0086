"""Heads over a corpus: the head table and the head clusters of thousands of texts, resumable.

One sentence shows what a head did once; what a head habitually does shows over a corpus (Clark
et al. 2019, "What Does BERT Look At?": heads that attend to [SEP], to the previous token, found
by averaging over a corpus and clustered by the distance between their patterns).

- :mod:`.texts` reads a corpus file (one text a line, or a JSONL field), checked and counted;
- :mod:`.measures` computes one text's per-head measures and its head-pair distances;
- :mod:`.shards` keeps a job's folder: a manifest saying which job it is, one ``.npz`` shard a
  batch written atomically under its own name, and the reduction reading the shards in order;
- :mod:`.clusters` turns the distances into a 2-D map of the heads (classical MDS);
- :mod:`.runner` maps the batches in this process or on a Dask cluster, resuming a folder.

Pure NumPy (and ``dask.distributed`` when a cluster is used); nothing here imports Qt.
"""
