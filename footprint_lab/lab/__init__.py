"""footprint_lab.lab (see ARCHITECTURE.md)."""
