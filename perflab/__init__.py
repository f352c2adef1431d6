"""grpc-perflab: run cells of the gRPC measurement matrix and analyse what they wrote.

Three packages say where their code runs (docs/architecture.md):

- `perflab.host`: runs on a benchmark host (runner, launch, agent, sampler); standard
  library and psutil only.
- `perflab.contract`: the data contract both sides share (cells, matrix, parsers of raw
  files, run ids); imports neither of the others.
- `perflab.analysis`: reads runs into pandas and decides verdicts (frames, stats, tables,
  plots, report); only the controller imports it.

`perflab.studies.<id>` holds a study's matrix (contract level) and analysis. Importing
`perflab` itself loads nothing: a benchmark host never pays for the analysis side.
"""
