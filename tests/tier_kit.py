"""The test tiers, by name: what plain ``pytest`` leaves to the slow tier (``tests/conftest.py`` marks them)."""

from __future__ import annotations

#: The slow tier: modules that start kernels, subprocesses, clusters or builds, or test huge values, by name (what
#: they start). Plain ``pytest`` runs the fast tier (``addopts`` in pyproject.toml leaves ``slow``, ``browser`` and
#: ``real_model`` out); the README's test command (``scripts/test``) runs every tier.
SLOW_MODULES = {
    "test_setup_scripts": "clones the repository, builds virtual environments and a wheel",
    "test_docs": "builds the documentation site and runs every code block of it",
    "test_typed_surface": "type-checks a user's script with mypy --strict in a subprocess",
    "test_notebooks": "executes every shipped notebook in a kernel",
    "test_huge_values": "runs, shows and exports answers of 20 MB",
    "test_batch_folders_hostile": "races processes saving run sets and starts a Dask cluster",
    "test_batch_cluster": "starts a Dask cluster",
    "test_batch_stopped": "interrupts a real kernel",
    "test_seal_display": "displays runs in real kernels and runs the CLI",
    "test_cli_exit_codes": "runs the console script in subprocesses",
    "test_cli_hostile": "runs the console script in subprocesses",
    "test_scrub_corners": "runs the console script in subprocesses",
    "test_lab_extension": "runs cells in a real kernel",
    "test_lab_magics": "runs cells in a real kernel",
    "test_ask_magic": "runs cells in a real kernel",
    "test_lab_chat": "runs cells in a real kernel",
    "test_errors_teach": "runs cells in a real kernel",
    "test_notebook_sharing": "runs cells in a real kernel",
    "test_provider_concurrency": "holds requests on local servers for seconds",
    "test_determinism": "runs fresh interpreters under other hash seeds",
    "test_saved_files_property": "corrupts saved files a few hundred ways",
    "test_otel_openinference": "runs the real frameworks' agents",
    "test_otel_conversations": "runs the real frameworks' agents",
    "test_package": "imports every public name in fresh interpreters",
}
#: single tests of the slow tier (``module.py::test``, every parameter of it), each taking half a second or more
#: on this machine: they wait out deadlines and time limits, run hundreds of mutations or random draws, start an
#: interpreter or a kernel, or move megabytes. Plain ``pytest`` stays a loop a newcomer runs in about a minute.
SLOW_TESTS = {
    # deadlines and time limits, waited out for real
    "test_faulty_replies_over_wire.py::test_a_reply_trickling_in_meets_the_deadline_and_keeps_what_reached_the_run",
    "test_faulty_replies_over_wire.py::test_keep_alives_that_never_end_meet_the_deadline",
    "test_faulty_replies_over_wire.py::test_the_deadline_bounds_the_retries_too",
    "test_explain_time_limit.py::test_a_factory_that_hangs_on_one_rerun_fails_that_rerun",
    "test_explain_time_limit.py::test_a_rerun_that_never_answers_fails_alone_and_the_proof_goes_on",
    "test_explain_time_limit.py::test_a_coroutine_comparator_that_never_returns_fails_its_rerun",
    "test_explain_time_limit.py::test_a_comparator_that_never_returns_fails_its_rerun_never_the_call",
    "test_explain_time_limit.py::test_a_factory_that_hangs_before_any_rerun_is_refused_by_name",
    "test_explain_localize.py::test_a_rerun_that_fails_for_a_passing_reason_is_tried_again",
    "test_redaction_linear.py::test_a_stalling_user_pattern_does_not_stall_the_run",
    "test_scan_reader_view.py::test_a_catastrophic_pattern_over_40_kb_is_searched_once_per_text_and_the_text_masked_whole",
    # hundreds of mutations, random draws or repeated trials
    "test_redaction_hostile.py::test_random_secrets_in_random_places_reach_no_surface",
    "test_redaction_hostile.py::test_random_secrets_reach_no_surface_of_a_composition_either",
    "test_otel_hostile.py::test_mutated_otlp_json_imports_or_is_refused_by_name",
    "test_otel_hostile.py::test_sdk_spans_with_mutated_properties_import_or_are_refused_by_name",
    "test_otel_hostile.py::test_any_parent_graph_is_refused_exactly_when_it_loops",
    "test_otel_hostile.py::test_nesting_thousands_deep_imports_in_bounded_time",
    "test_flow_checkpoint_properties.py::test_a_flow_checkpoint_survives_json_round_trips_byte_for_byte",
    "test_flow_checkpoint_properties.py::test_a_mutated_flow_checkpoint_is_refused_by_name_or_resumes",
    "test_checkpoint_properties.py::test_a_checkpoint_survives_json_round_trips_byte_for_byte",
    "test_recording_door.py::test_a_randomly_edited_recording_is_refused_by_name_or_every_view_works",
    "test_explain_search.py::test_no_arm_without_effect_is_confirmed_beyond_alpha_when_a_pair_is_the_cause",
    "test_explain_search.py::test_nothing_is_confirmed_beyond_alpha_when_nothing_matters",
    "test_explain_search.py::test_two_arms_that_act_only_together_are_confirmed_together_within_48_reruns_at_25_percent_noise",
    "test_explain_trial.py::test_pieces_without_effect_are_confirmed_in_at_most_alpha_of_trials",
    "test_cancellation.py::test_a_cancel_at_any_event_keeps_every_finished_round_and_never_repeats_one",
    "test_batch.py::test_where_may_be_the_run_ids_of_a_filtered_frame",
    "test_batch.py::test_localize_over_the_wrong_answers_finds_each_planted_cause",
    # an interpreter, a kernel, a process or a live exporter
    "test_progress_and_stop.py::test_an_interrupted_localize_in_a_real_kernel_prints_one_line_and_keeps_the_partial_report",
    "test_progress_and_stop.py::test_a_localize_run_headless_keeps_its_line_not_the_widget_repr",
    "test_lab_views.py::test_a_run_displays_without_the_extension_in_a_fresh_interpreter",
    "test_batch.py::test_importing_the_package_or_the_batch_loads_no_dask",
    "test_flow_checkpoint.py::test_a_pause_stored_by_one_process_resumes_in_another",
    "test_otel_receiver.py::test_the_official_exporter_delivers_a_framework_run_live",
    "test_otel_export.py::test_export_refuses_bad_arguments_and_reports_a_refusing_collector",
    "test_otel_export.py::test_export_reaches_a_collector_with_names_parents_attributes_and_no_secret",
    # megabytes shown, saved or exported, or hundreds of turns
    "test_chat_memory.py::test_what_a_chat_keeps_per_turn_does_not_grow_with_the_turns_it_carries",
    "test_hostile_values.py::test_the_exported_page",
    "test_hostile_values.py::test_compositions_and_their_trees",
    "test_export_size.py::test_a_large_value_is_not_multiplied_by_the_export",
    "test_export_size.py::test_a_saved_recording_holds_a_large_text_once_and_reads_back_whole",
    "test_saved_files.py::test_nesting_is_measured_without_recursion_and_stops_at_the_bound",
    "test_explain_difference.py::test_a_long_run_view_draws_a_bounded_part_and_says_where_the_rest_is",
}
