"""Ready-made scenarios: agents and runs whose causes are known, for notebooks, docs, tests and benchmarks.

- :mod:`footprint_lab.examples.scenarios`: ``planted_fact_agent()``, the refunds agent with a planted
  fact that the explain layer's acceptance tests, the notebooks and the docs explain;
- :mod:`footprint_lab.examples.pipelines`: composed versions of it (``refund_pipeline``,
  ``review_panel``), whose cause sits in one member;
- :mod:`footprint_lab.examples.local_model`: llama.cpp's server on a small GGUF model, for the
  real-model tier;
- :mod:`footprint_lab.examples.truth`: planted-culprit cases in seven classes, on a scripted model
  with optional noise (what ``bench/bench_truth.py`` measures the explanations against);
- :mod:`footprint_lab.examples.support_desk`: a support desk's evaluation set (refund requests on the
  scripted model, each wrong answer with a planted cause) for run sets (``footprint_lab.batch``).
"""
