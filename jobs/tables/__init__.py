"""Every Delta table of kafka-recon: schemas (``registry``) and the one storage layer (``delta_store``)."""
