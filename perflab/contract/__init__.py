"""The data contract both sides share: what a cell is, how a matrix is declared and expanded,
how raw files parse. Imports neither perflab.host nor perflab.analysis."""
