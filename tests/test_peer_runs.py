"""Our own runs of a key on this machine (``p2p.peer.runs``): a run that has ended is
ours (its presences never make a restarted client watch); a run still alive in another
window is another session of the key, not ours."""

from __future__ import annotations

from pathlib import Path

from p2p.peer.runs import MAX_KEPT, Runs


def test_ended_runs_are_ours_and_a_live_window_is_not(tmp_path: Path) -> None:
    first = Runs(tmp_path)
    assert first.begin(1_000) == []
    window = Runs(tmp_path)  # a second window while the first runs (its lock held)
    assert window.begin(2_000) == []
    first.end()  # the first quits (or crashes: the kernel drops its lock)
    restarted = Runs(tmp_path)
    assert restarted.begin(3_000) == [1_000]
    window.end()
    restarted.end()
    assert Runs(tmp_path).begin(4_000) == [1_000, 2_000, 3_000]


def test_only_the_newest_ended_runs_are_kept_and_junk_files_are_ignored(tmp_path: Path) -> None:
    for since in range(MAX_KEPT + 5):
        run = Runs(tmp_path)
        run.begin(since)
        run.end()
    (tmp_path / "notes.run").write_text("junk")
    assert Runs(tmp_path).begin(10_000) == list(range(5, MAX_KEPT + 5))
    assert len(list(tmp_path.glob("*.run"))) == MAX_KEPT + 2  # kept, ours now, the junk


def test_an_unusable_directory_remembers_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert Runs(blocker / "runs").begin(1) == []
