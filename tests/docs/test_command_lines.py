"""The command lines the README and ``docs/`` show but do not run are checked, without running them, so that a
renamed verb, step or option cannot leave one wrong.

Those are the lines of ``text`` blocks (the verbs' synopses, commands too long for the suite or needing other
machines), of saved shell files (a Slurm script) and of YAML (a Kubernetes Job); the runnable blocks run in
``test_examples.py``. Each ``capreplay`` command among them (after a ``$ `` prompt, an ``&&``, ``VAR=...``
assignments, inside ``sbatch --wrap '...'``, continued with a backslash; see ``command_lines.py``) is checked:

- a concrete one is parsed by capreplay's own parser (abbreviated options refused); argparse's refusal fails the
  test as ``page:line: command: message``;
- a synopsis (``[...]``, ``A|B``, ``...`` or an ALL-CAPS placeholder) must name a verb and step that exist, only
  options they have and only values among an option's choices; each page of ``docs/verbs/`` must open with the
  synopsis of its verb, a line for every step, and name every option of the verb somewhere;
- ``[uv run] python scripts/NAME.py ...``: the script exists and each option is in its ``--help``.

The only exception: other tools' commands (``ray``, ``sbatch``, ``kubectl``'s Job manifest, ``wb-manager``,
``wayback``, ``$EDITOR``) are not checked.
"""

from __future__ import annotations

from tests.docs.cli_check import (
    parse_problem,
    parser,
    resolve,
    script_problems,
    synopsis_problems,
    synopsis_words,
    unnamed_options,
)
from tests.docs.command_lines import CommandLine, shown_commands
from tests.docs.examples import Block, blocks, pages
from tests.support.command_tree import subcommands
from tests.support.paths import ROOT

SHOWN = [c for p in pages() for b in blocks(p) for c in shown_commands(b)]


def _of(kind: str) -> list[CommandLine]:
    return [c for c in SHOWN if c.kind == kind]


def _commands(source: str, info: str = "text", **attributes: str) -> list[CommandLine]:
    return shown_commands(Block(ROOT / "docs" / "example.md", 10, info, source, attributes))


def test_every_concrete_capreplay_line_shown_parses() -> None:
    problems = [p for c in _of("concrete") if (p := parse_problem(c))]
    assert not problems, "\n".join(problems)


def test_every_synopsis_names_a_real_verb_step_and_options() -> None:
    problems = [p for c in _of("synopsis") for p in synopsis_problems(c)]
    assert not problems, "\n".join(problems)


def test_every_verb_page_opens_with_the_synopsis_of_its_verb_and_each_step_and_names_every_option() -> None:
    verbs = subcommands(parser())
    problems, verb_pages = [], sorted((ROOT / "docs" / "verbs").glob("*.md"))
    assert len(verb_pages) >= 10, verb_pages
    for page in verb_pages:
        verb, where = page.stem, page.relative_to(ROOT).as_posix()
        if verb not in verbs:
            problems.append(f"{where}: a page for no verb of capreplay's")
            continue
        first = blocks(page)[0]
        named = [resolve(synopsis_words(c)) for c in shown_commands(first) if first.info == "text"]
        steps = {step for v, step, _ in named if v == verb}
        if not any(v == verb for v, _, _ in named):
            problems.append(
                f"{where}:{first.line}: the first block is not a text block with capreplay {verb}'s synopsis"
            )
        elif missing := [s for s in subcommands(verbs[verb]) if s not in steps]:
            problems.append(f"{where}:{first.line}: the synopsis has no line for step(s) {', '.join(missing)}")
        if unnamed := unnamed_options(verb, page.read_text(encoding="utf-8")):
            problems.append(f"{where}: names no option {', '.join(unnamed)} of capreplay {verb}")
    assert not problems, "\n".join(problems)


def test_every_script_line_names_a_script_and_its_options() -> None:
    problems = [p for c in _of("script") for p in script_problems(c)]
    assert not problems, "\n".join(problems)


def _found(page: str, *parts: str) -> bool:
    return any(c.where.startswith(f"{page}:") and all(part in c.text for part in parts) for c in SHOWN)


def test_the_shown_lines_are_found_in_every_form_the_pages_write_them() -> None:
    """The finder reaches the pages' lines (the next test reads each form on its own): one that found nothing would
    leave the tests above empty."""
    assert len(_of("concrete")) >= 25 and len(_of("synopsis")) >= 25 and len(_of("script")) >= 2, SHOWN
    jobs = "docs/integrations/array-jobs.md"
    assert _found(jobs, "capreplay run --agent gold", '--shard "$SLURM_ARRAY_TASK_ID/8"')  # continued with a backslash
    assert _found(jobs, "capreplay run merge") and _found(jobs, "capreplay judge")  # in sbatch --wrap '...'
    assert _found(jobs, '--shard "$JOB_COMPLETION_INDEX/8"')  # a Kubernetes Job's folded YAML
    assert _found("docs/verbs/run.md", "capreplay run --agent browser_use")  # after CAPREPLAY_AGENT_API_KEY=...
    assert _found("docs/verbs/import.md", "capreplay import iana.warc.gz")  # after a $ prompt
    assert _found("docs/benchmark.md", "capreplay report results/runs/gold")  # after &&
    assert _found("docs/settling.md", "scripts/bench_agents.py --compare-settling")  # a script's line


def test_the_finder_reads_each_form_and_skips_comments_and_output() -> None:
    text = (
        "$ FOO=1 capreplay verify snap && capreplay view   # capreplay demo\n"
        "shown output, capreplay demo\n"
        "$ sbatch --wrap 'capreplay run merge a b' \\\n"
        "    --job-name x\n"
    )
    assert [(c.line, c.text) for c in _commands(text)] == [
        (11, "capreplay verify snap"), (11, "capreplay view"), (13, "capreplay run merge a b"),
    ]  # fmt: skip
    synopsis = "capreplay run [start] --agent gold\n      [--browsers N | --backend ray]\n"
    assert [(c.kind, c.text) for c in _commands(synopsis)] == [
        ("synopsis", "capreplay run [start] --agent gold [--browsers N | --backend ray]")
    ]
    assert _commands("capreplay demo\n", info="json") == []
    script = _commands("for i in 1 2; do\n  capreplay verify snap-$i > out.txt 2>&1\ndone\n", "bash", file="a.sh")
    assert [c.words() for c in script] == [["verify", "snap-1"]]


def test_a_broken_line_fails_with_its_place_and_argparse_message() -> None:
    line = _commands("capreplay report results/runs/gold --kinds judge\n")[0]
    assert parse_problem(line) == (
        "docs/example.md:11: capreplay report results/runs/gold --kinds judge: "
        "capreplay: unrecognized arguments: --kinds judge"
    )
    assert "invalid choice: 'judges'" in str(parse_problem(_commands("capreplay judges results/runs/gold\n")[0]))
    assert "the following arguments are required: --agent" in str(
        parse_problem(_commands("capreplay run --tasks tasks.json\n")[0])
    )
    assert "unrecognized arguments: --kin" in str(parse_problem(_commands("capreplay report r --kin judge\n")[0]))
    assert parse_problem(_commands("capreplay judge results/runs/gold --json\n")[0]) is None  # the default step


def test_a_broken_synopsis_or_script_line_fails() -> None:
    [bad_option, bad_step, bad_verb] = _commands(
        "capreplay judge [score] RUN_DIR [--cache-dir DIR]\ncapreplay judge rubric --task ID\ncapreplay jduge DIR\n"
    )
    assert synopsis_problems(bad_option) == [
        "docs/example.md:11: capreplay judge [score] RUN_DIR [--cache-dir DIR]: capreplay judge score has no option "
        "--cache-dir"
    ]
    assert "capreplay judge has no step 'rubric'" in synopsis_problems(bad_step)[0]
    assert "no verb 'jduge'" in synopsis_problems(bad_verb)[0]
    [bad_choice] = _commands("capreplay report results/runs/ID [--kind study|agent]\n")
    assert synopsis_problems(bad_choice) == [
        "docs/example.md:11: capreplay report results/runs/ID [--kind study|agent]: capreplay report: --kind takes "
        "no 'agent' (its choices: study, agents, judge)"
    ]
    assert unnamed_options("report", "`-o DIR`, `--kind`") == ["--json"]
    [script, missing] = _commands(
        "uv run python scripts/bench_agents.py --round 2\npython scripts/no_such_bench.py --rounds 2\n"
    )
    assert script_problems(script) == [
        "docs/example.md:11: uv run python scripts/bench_agents.py --round 2: scripts/bench_agents.py has no option "
        "--round"
    ]
    assert script_problems(missing) == [
        "docs/example.md:12: python scripts/no_such_bench.py --rounds 2: no script scripts/no_such_bench.py"
    ]
