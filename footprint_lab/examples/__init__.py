"""Ready-made scenarios: agents and runs whose causes are known, for notebooks, docs, tests and benchmarks.

- :mod:`footprint_lab.examples.truth`: planted-culprit cases in seven classes, on a scripted model
  with optional noise (what ``bench/bench_truth.py`` measures the explanations against).
"""
