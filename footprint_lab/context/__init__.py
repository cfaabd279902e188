"""footprint_lab.context (see ARCHITECTURE.md)."""
