"""Runs on a benchmark host: one cell (runner), servers on another host (agent), their
processes, proxies and samples. Standard library and psutil only: never imports analysis."""
