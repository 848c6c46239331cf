"""The order the suite's tests are handed to the workers: the longest first.

``pytest -n 4 --maxschedchunk 1`` (the README's test command) gives each worker one test
at a time, in collection order (plain ``-n 4`` hands out runs of up to a quarter of the
suite at once).  A 100 s test collected late then runs alone at the end while the other
workers idle; starting the longest tests first (longest-processing-time scheduling) keeps
all workers busy to the end.  The figures are seconds one test took in a full run on
2 busy cores (``--durations``, 2026-12-03); only their order matters, and a test missing
here just keeps its place after them.  Tests that first showed up in a later run on an
overloaded machine (load 20 on 2 cores: CPU-bound tests took 2 to 6 times their earlier
figures there) carry 0.4 times that run's figure; a test that run measured quicker than
its earlier figure carries the quicker one (the browser tests had become quicker).
Nothing here changes what a test does.
"""

from __future__ import annotations

from typing import Any

SLOW: dict[str, float] = {
    "tests/test_static_checks.py::test_mypy_finds_nothing": 75,
    "tests/test_faults_live.py::test_a_5min_outage_of_a_guest_on_its_turn_is_forfeited": 73,
    "tests/test_memory_bounds.py::test_a_flood_of_fresh_keys": 65,
    "tests/test_faults_live.py::test_a_5min_outage_of_a_guest_on_its_turn_3_seats": 61,
    "tests/test_faults_live.py::test_a_150s_outage_of_the_admin": 53,
    "tests/test_integration_lobby_flood.py::test_2500_fake_presences": 52,
    "tests/test_integration_lobby_flood.py::test_key_rotating_chat_flood_and_invitation_spam": 46,
    "tests/test_integration_brokers.py::test_live_every_feature_on_each_broker": 43,
    "tests/test_web_play.py::test_phone_sized_hot_seat": 42,
    "tests/test_web_rounds.py::test_a_restarted_page_process_resumes": 40,
    "tests/test_web_play.py::test_chess4_with_computer_seats_runs_in_the_browser": 40,
    "tests/test_faults_live.py::test_a_150s_outage_of_a_guest_on_its_turn": 37,
    "tests/test_simulation.py::test_no_violation_in_N_schedules[mixed-0]": 37,
    "tests/test_simulation.py::test_no_violation_in_N_schedules[honest-0]": 35,
    "tests/test_typed_package.py::test_the_bot_example_type_checks": 34,
    "tests/test_web_play.py::test_connect4_in_the_browser_ends_with_the_winning_line": 34,
    "tests/test_web_rounds.py::test_local_broker_with_a_computer_player": 33,
    "tests/test_web_rounds.py::test_a_second_session_of_the_key_watches": 33,
    "tests/test_web_play.py::test_three_players_of_the_cube_here": 32,
    "tests/test_simulation.py::test_no_violation_in_N_schedules[mixed-50]": 30,
    "tests/test_integration_authenticate_then_charge.py::test_live_a_flushed_memory": 29,
    "tests/test_faults_live.py::test_a_broker_restart_of_10s_mid_round": 29,
    "tests/test_web_play.py::test_cube_two_browsers_and_a_shell_play_to_the_end": 27,
    "tests/test_shell_presence_flood.py::test_a_presence_flood_is_one_count": 26,
    "tests/test_simulation.py::test_no_violation_in_N_schedules[honest-50]": 26,
    "tests/test_web_rounds.py::test_private_round_takeback_again_resign": 25,
    "tests/test_bench_output.py::test_bench_flood_prints_each_line_once": 25,
    "tests/test_connect4_solver.py::test_small_boards_match_plain_minimax[5-4]": 25,
    "tests/test_web_security.py::test_a_page_of_another_origin": 24,
    "tests/test_simulation.py::test_no_violation_in_N_schedules[silent_loser-0]": 24,
    "tests/test_connect4_solver.py::test_begin_medium_one": 23,
    "tests/test_web_rounds.py::test_lobby_friends_impostors_and_clocks": 23,
    "tests/test_integration_live_ending.py::test_live_a_cut_off_guest_learns": 23,
    "tests/test_simulation.py::test_no_violation_in_N_schedules[mixed-100]": 23,
    "tests/test_shell_three_friends_e2e.py::": 22,
    "tests/test_web_rounds.py::test_a_lost_broker_is_shown": 22,
    "tests/test_broker_limits.py::test_broker_limit_row": 22,
    "tests/test_docs_names.py::test_every_path_and_name_the_docs_mention_exists": 22,
    "tests/test_integration_lobby_flood.py::test_replayed_chat_and_hellos_are_dropped_and_nobo": 22,
    "tests/test_connect4_ai.py::test_bigger_boards": 21,
    "tests/test_web_rounds.py::test_a_slow_round_and_a_live_round_listed": 21,
    "tests/test_shell_text.py::test_two_shells_same_score_line": 21,
    "tests/test_bounded_tables.py::test_strangers_leave_no_memory": 20,
    "tests/test_integration_flood.py::test_a_flood_on_round_and_lobby_loses_no_honest_event": 20,
    "tests/test_chess4_perft.py::test_perft_start_depth5": 19,
    "tests/test_integration_fair_chain.py::test_live_old_position_forfeits": 18,
    "tests/test_bench_output.py::test_bench_lobby_prints_no_traceback": 17,
    "tests/test_simulation.py::test_the_silent_loser_finds_nothing": 17,
    "tests/test_shell_language.py::test_a_whole_local_session_speaks_one_language[en]": 17,
    "tests/test_shell_language.py::test_a_whole_local_session_speaks_one_language[de]": 17,
    "tests/test_web_boards.py::": 16,
    "tests/test_chess4_ai.py::test_mixed_levels_play_within_a_move_limit": 16,
    "tests/test_web_session.py::test_bad_options_exit_with_one_line": 15,
    "tests/test_simulation.py::test_a_schedule_replays_exactly": 15,
    "tests/test_shell_result_lines.py::test_a_fair_forfeit_learned_after_a_restart": 14,
    "tests/test_faults_live.py::test_a_connection_reset_every_6s": 14,
    "tests/test_connect4_solver.py::test_middle_medium_sample": 14,
    "tests/test_integration_clocks.py::test_a_round_completes_with_one_clock_off": 13,
    "tests/test_shell_text.py::test_chess4_says_check_mate": 13,
    "tests/test_integration_rounds.py::test_chess4_two_humans_two_computers": 13,
    "tests/test_shell_many_rounds.py::test_three_slow_rounds_and_a_live_one_listed_resumed_and": 12,
    "tests/test_connect4_ai.py::test_analyze_round_on_a_small_board": 12,
    "tests/test_chess4_movegen.py::test_generator_matches_reference_on_random_games[3]": 12,
}
"""Prefixes of node ids and the seconds their tests took (a parametrized test's every case)."""


def cost(nodeid: str) -> float:
    """The longest figure whose prefix ``nodeid`` starts with, or 0.

    >>> cost("tests/test_broker_limits.py::test_broker_limit_row[row3]")
    22
    >>> cost("tests/test_cube.py::test_anything")
    0
    """
    return max((s for prefix, s in SLOW.items() if nodeid.startswith(prefix)), default=0)


def longest_first(items: list[Any]) -> None:
    """Sort ``items`` in place: known slow tests first, longest first; the rest keep their
    collection order after them (a stable sort)."""
    items.sort(key=lambda item: -cost(item.nodeid))
