"""footprint_lab.flow (see ARCHITECTURE.md)."""
