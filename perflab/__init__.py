"""grpc-perflab: run cells of the gRPC measurement matrix and analyse what they wrote.

The host side (runner, manifest facts) needs only the standard library and psutil;
the analysis side (load, stats, plots, report) imports pandas and matplotlib lazily,
so a benchmark host never needs the controller's packages.
"""

from perflab.load import MalformedRawFile, load, load_cells, load_manifest, load_reference

__all__ = ["MalformedRawFile", "load", "load_cells", "load_manifest", "load_reference"]
