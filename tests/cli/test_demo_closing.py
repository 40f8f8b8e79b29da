"""The demo's last lines point to the benchmark of real applications and open everything in the viewer."""

from __future__ import annotations

from pathlib import Path

from capreplay.cli.demo import closing_lines


def test_the_last_lines_name_the_benchmark_and_the_viewer_command() -> None:
    lines = closing_lines(Path("results/demo"), None, Path("benchmark"))
    assert lines == [
        "the fixture world is small; the benchmark of eight real applications, frozen in benchmark/, runs offline "
        "too: capreplay run --benchmark benchmark --agent gold --browsers 2",
        "look at the run, its episodes, the offline study and the snapshot in a browser: capreplay view "
        "results/demo "
        "--benchmark benchmark",
    ]


def test_without_a_benchmark_folder_the_last_line_opens_the_demo_alone() -> None:
    assert closing_lines(Path("r"), Path("kept"), None) == [
        "look at the run, its episodes, the offline study and the snapshot in a browser: capreplay view r "
        "--snapshot kept"]
