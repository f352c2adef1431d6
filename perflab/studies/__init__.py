"""One module per study: how its matrix section expands into cells."""
