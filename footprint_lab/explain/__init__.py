"""footprint_lab.explain (see ARCHITECTURE.md)."""
