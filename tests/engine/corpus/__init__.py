"""Tests of engine/corpus/: corpus jobs, in this process and on a Dask cluster."""
