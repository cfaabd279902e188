"""What every room stands on: refusals, the registries higher rooms fill, each package's surface, sound text,
safe file reading, and the progress and stop of long work.

- :mod:`footprint_lab.base.refusal`: ``Refusal`` and ``RunFailure``, the two kinds of error every door
  raises, and how a refusal says what arrived without quoting it (``describe_shape``);
- :mod:`footprint_lab.base.display`, :mod:`footprint_lab.base.runners`,
  :mod:`footprint_lab.base.bug_reports`: registries a lower room reads and a higher one fills (the
  views, the runner kinds, the bug-report writer), so no room imports one above it;
- :mod:`footprint_lab.base.exports`: how each package offers its public names lazily;
- :mod:`footprint_lab.base.unicode`: text made sound (lone surrogates, invisible characters);
- :mod:`footprint_lab.base.regular_file`: reading a file only when it is a regular one, with a size cap;
- :mod:`footprint_lab.base.progress`: the one progress bar and the stop that keeps what finished.

Role: the bottom room; it imports only the standard library (and, inside functions, the display
libraries a bar needs). It knows nothing of runs or recordings: those are ``footprint_lab.record``'s.
"""
