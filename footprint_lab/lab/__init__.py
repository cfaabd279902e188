"""footprint_lab.lab: the notebook extension, magics, views and the Lab widget (README, "Architecture", level 5)."""
