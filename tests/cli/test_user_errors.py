"""The mistakes a user is likely to type, verb by verb: exit status 2, one line, no traceback, nothing written.

DESIGN.md's contract: "Exit status 2 for bad input ... with one clear line on stderr naming the file and what
is wrong; never a traceback for a user mistake". Each case runs ``python -m capreplay`` (forked from a warm
process: tests/support/cli.py) in a working folder of its own and checks the status, that stderr is exactly one
``capreplay ...`` line naming the file or option and the problem, that no "Traceback" is printed anywhere, that
nothing is printed on stdout, and that the case's folder (its inputs, its working folder, any ``-o`` or
``--results`` it names) is byte for byte what it was: no output folder, no half-written file.

Every case must be refused before a browser starts, so the module is fast: all cases start at once on a small
pool, and each test waits for its own. What tests/cli/test_bad_input.py already checks (broken or tampered
snapshots for serve, verify and open; invalid capture plans; a non-empty capture folder) is not repeated here.

Duplicate ids are refused everywhere, never silently merged: ``study run --pages a,a``, ``run --task X --task
X``, ``run --agent gold --agent gold``, ``verify --url U --url U``, ``import F F``, ``capture U U``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from capreplay.capture.plan_file import load_plan, plan_from_urls, with_crawl_options
from capreplay.cli import build_parser
from capreplay.errors import UsageError
from tests.support.cli import start
from tests.support.command_tree import subcommands

REPO = Path(__file__).resolve().parents[2]
TASKS = REPO / "tasks.json"
SNAPSHOTS = REPO / "snapshots"
FIXTURES = SNAPSHOTS / "fixtures"
WARC = FIXTURES / "archive" / "data-00000.warc.gz"
SHOP = "https://www.shop.test/"
NOWHERE = "www.shop.test=127.0.0.1:9"
"""A --map to a closed port: a capture that wrongly starts reaches nothing."""
TIMEOUT = 60.0
"""Seconds a run may take before it is killed; a refusal takes about one."""
WORKERS = max(2, os.cpu_count() or 2)
WORKFLOW_TASK = json.loads(TASKS.read_text(encoding="utf-8"))["workflows"]["tasks"][0]["id"]


# -- the inputs a case can ask for -----------------------------------------------------------------------------


def _project(root: Path, *, thinking: bool = False) -> None:
    """``root/project``: a copy of the project's tasks file beside its snapshots, registered as ``reg`` into
    ``root/project/results``; with ``thinking``, the study's model settings turn thinking on."""
    from capreplay.runs.registration import register

    project = root / "project"
    project.mkdir()
    (project / "snapshots").symlink_to(SNAPSHOTS, target_is_directory=True)
    data = json.loads(TASKS.read_text(encoding="utf-8"))
    if thinking:
        model = data["study"]["protocol"]["model"]
        model["thinking"] = {"type": "enabled", "budget_tokens": 1024}
        model["max_tokens"] = 2048
    (project / "tasks.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    register(project / "tasks.json", results_dir=project / "results", registration_id="reg")


def _inputs(root: Path) -> None:
    """The small files and folders every case may name."""
    (root / "empty").mkdir()
    (root / "full").mkdir()
    (root / "full" / "keep.txt").write_text("not the command's to touch\n")
    (root / "notes.txt").write_text("a text file, not an archive or a snapshot\n")
    (root / "bad.json").write_text("{not json\n")
    (root / "plan.json").write_text(json.dumps({"pages": [{"url": SHOP}]}))
    (root / "crawl.json").write_text(json.dumps({"crawl": {"seeds": [SHOP], "depth": 1}}))
    (root / "no-workflows.json").write_text(json.dumps({"schema_version": 1, "snapshots": {"world": "world"}}))
    (root / "invalid-tasks.json").write_text(json.dumps({"schema_version": 1, "snapshots": {}}))
    (root / "labels.jsonl").write_text(json.dumps({"episode": "gold/0/t", "pass": True}) + "\n")
    (root / "bad-labels.jsonl").write_text(json.dumps({"episode": "gold/0/t"}) + "\n")


def _shards(root: Path, *, missing: bool = False, unfinished: bool = False, twice: bool = False,
            merged: bool = False) -> None:  # fmt: skip
    """Shards 0 and 1 of 2 of run ``exp`` in ``root/results/runs``, made by hand: complete, or with shard 1
    ``missing`` or ``unfinished``, or claimed ``twice``, or with the merged run already there."""
    from tests.support.shards import make_shard, whole_run

    info = whole_run("exp")
    make_shard(root / "results", info, 0, 2)
    if not missing:
        make_shard(root / "results", info, 1, 2, complete=not unfinished)
    if twice:
        make_shard(root / "results", info, 1, 2, folder_name="again")
    if merged:
        (root / "results" / "runs" / "exp").mkdir()


# -- the cases ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One mistake: the arguments, what the one line must name and say, and any input it needs made first.

    ``{root}`` in ``args`` and ``names`` is the case's folder; ``{fixtures}``, ``{study}``, ``{tasks}`` and
    ``{warc}`` are the committed snapshots, the project's tasks file and a committed WARC file.
    """

    id: str
    args: list[str]
    names: list[str]
    problem: str
    """Regular expression (case-insensitive) for what the line must say is wrong."""
    setup: Callable[[Path], None] | None = None

    def fill(self, text: str, root: Path) -> str:
        return text.format(root=root, fixtures=FIXTURES, study=SNAPSHOTS / "study", tasks=TASKS, warc=WARC)


CAPTURE_TAIL = ["-o", "{root}/out", "--no-progress", "--map", NOWHERE]

CASES = [
    # capture: options that cannot combine, bad numbers, URLs
    Case("capture-same-site-alone", ["capture", SHOP, "--same-site", *CAPTURE_TAIL], ["--same-site", "--depth"],
         r"needs"),
    Case("capture-plan-without-crawl-depth", ["capture", "--plan", "{root}/plan.json", "--depth", "2", *CAPTURE_TAIL],
         ["{root}/plan.json", "--depth"], r"no 'crawl' section"),
    Case("capture-plan-without-crawl-same-site", ["capture", "--plan", "{root}/plan.json", "--same-site",
                                                  *CAPTURE_TAIL], ["{root}/plan.json", "--same-site"], r"no 'crawl'"),
    Case("capture-plan-depth-too-deep", ["capture", "--plan", "{root}/crawl.json", "--depth", "30", *CAPTURE_TAIL],
         ["--depth", "30"], r"less than or equal to 20"),
    Case("capture-negative-depth", ["capture", SHOP, "--depth", "-1", *CAPTURE_TAIL], ["--depth", "-1"],
         r"greater than or equal to 0"),
    Case("capture-depth-not-a-number", ["capture", SHOP, "--depth", "two", *CAPTURE_TAIL], ["--depth", "two"],
         r"whole number"),
    Case("capture-max-pages-zero", ["capture", SHOP, "--max-pages", "0", *CAPTURE_TAIL], ["--max-pages"],
         r"greater than or equal to 1"),
    Case("capture-url-twice", ["capture", SHOP, SHOP, *CAPTURE_TAIL], [SHOP], r"twice"),
    Case("capture-bare-host", ["capture", "www.shop.test", *CAPTURE_TAIL], ["www.shop.test"], r"http"),
    Case("capture-host-mapped-twice", ["capture", SHOP, *CAPTURE_TAIL, "--map", "www.shop.test=127.0.0.1:10"],
         ["--map", "www.shop.test"], r"mapped twice"),
    Case("capture-out-inside-a-file", ["capture", SHOP, "-o", "{root}/notes.txt/snap", "--no-progress", "--map",
                                       NOWHERE], ["{root}/notes.txt/snap"], r"is a file, not a folder"),
    Case("capture-seed-not-a-number", ["capture", SHOP, "--seed", "x", *CAPTURE_TAIL], ["--seed"], r"invalid int"),
    # import
    Case("import-missing-file", ["import", "{root}/nosuch.warc.gz", "-o", "{root}/out"], ["{root}/nosuch.warc.gz"],
         r"no such file"),
    Case("import-a-snapshot-folder", ["import", "{fixtures}", "-o", "{root}/out"], ["{fixtures}"], r"directory"),
    Case("import-same-file-twice", ["import", "{warc}", "{warc}", "-o", "{root}/out"], ["{warc}"], r"twice"),
    Case("import-page-twice", ["import", "{warc}", "--page", SHOP, "--page", SHOP, "-o", "{root}/out"],
         ["--page", SHOP], r"twice"),
    Case("import-into-non-empty-folder", ["import", "{warc}", "-o", "{root}/full"], ["{root}/full"], r"not empty"),
    Case("import-out-inside-a-file", ["import", "{warc}", "-o", "{root}/notes.txt/snap"], ["{root}/notes.txt/snap"],
         r"is a file, not a folder"),
    # export
    Case("export-not-a-snapshot", ["export", "{root}/empty", "-o", "{root}/out.wacz"], ["{root}/empty"],
         r"not a snapshot"),
    Case("export-output-folder-missing", ["export", "{fixtures}", "-o", "{root}/nodir/out.wacz"],
         ["{root}/nodir/out.wacz"], r"does not exist"),
    Case("export-not-a-wacz-name", ["export", "{fixtures}", "-o", "{root}/out.zip"], ["{root}/out.zip"], r"\.wacz"),
    # serve
    Case("serve-negative-port", ["serve", "{fixtures}", "--http-port", "-1"], ["--http-port", "-1"], r"port number"),
    Case("serve-port-too-large", ["serve", "{fixtures}", "--https-port", "70000"], ["--https-port", "70000"],
         r"port number"),
    Case("serve-one-port-for-both", ["serve", "{fixtures}", "--http-port", "8123", "--https-port", "8123"],
         ["--http-port", "--https-port", "8123"], r"both"),
    # verify
    Case("verify-bare-host-url", ["verify", "{fixtures}", "--url", "www.shop.test"], ["--url", "www.shop.test"],
         r"http"),
    Case("verify-url-twice", ["verify", "{fixtures}", "--url", SHOP, "--url", SHOP], ["--url", SHOP], r"twice"),
    # open
    Case("open-bare-host-url", ["open", "{fixtures}", "www.shop.test"], ["URL", "www.shop.test"], r"http"),
    Case("open-host-not-in-snapshot", ["open", "{fixtures}", "https://nosuch.test/"], ["nosuch.test", "{fixtures}"],
         r"holds nothing"),
    Case("open-screenshot-folder-missing", ["open", "{fixtures}", SHOP, "--screenshot", "{root}/nodir/x.png"],
         ["--screenshot", "{root}/nodir/x.png"], r"does not exist"),
    Case("open-html-is-a-folder", ["open", "{fixtures}", SHOP, "--html", "{root}/empty"],
         ["--html", "{root}/empty"], r"folder"),
    # demo
    Case("demo-outside-the-project", ["demo"], ["tasks.json"], r"project folder"),
    Case("demo-keep-non-empty", ["demo", "--keep", "{root}/full"], ["{root}/full"], r"not an empty folder"),
    Case("demo-results-inside-a-file", ["demo", "--results", "{root}/notes.txt/results"],
         ["{root}/notes.txt/results"], r"is a file, not a folder"),
    # view
    Case("view-results-missing", ["view", "{root}/nosuch"], ["{root}/nosuch"], r"not a folder"),
    Case("view-export-non-empty", ["view", "{root}/empty", "--export", "{root}/full"], ["{root}/full"], r"not empty"),
    Case("view-export-is-a-file", ["view", "{root}/empty", "--export", "{root}/notes.txt"], ["{root}/notes.txt"],
         r"file of that name"),
    Case("view-port-out-of-range", ["view", "{root}/empty", "--port", "70000"], ["--port", "70000"], r"port number"),
    # register
    Case("register-missing-tasks", ["register", "--tasks", "{root}/nosuch.json", "--results", "{root}/results"],
         ["{root}/nosuch.json"], r"no such file"),
    Case("register-tasks-not-json", ["register", "--tasks", "{root}/bad.json", "--results", "{root}/results"],
         ["{root}/bad.json"], r"not valid JSON"),
    Case("register-invalid-tasks", ["register", "--tasks", "{root}/invalid-tasks.json", "--results", "{root}/results"],
         ["{root}/invalid-tasks.json", "snapshots"], r"invalid tasks file"),
    Case("register-bad-id", ["register", "--tasks", "{tasks}", "--results", "{root}/results", "--id", "../x"],
         ["../x"], r"letters, digits"),
    Case("register-existing-id", ["register", "--tasks", "{root}/project/tasks.json", "--results",
                                  "{root}/project/results", "--id", "reg"],
         ["{root}/project/results/registrations/reg.json"], r"never replaced", _project),
    Case("register-results-is-a-file", ["register", "--tasks", "{tasks}", "--results", "{root}/notes.txt"],
         ["{root}/notes.txt"], r"not a directory"),
    # study
    Case("study-measure-tasks-not-json", ["study", "measure", "--tasks", "{root}/bad.json"], ["{root}/bad.json"],
         r"not valid JSON"),
    Case("study-measure-not-a-snapshot", ["study", "measure", "--snapshot", "{root}/empty"], ["{root}/empty"],
         r"not a snapshot"),
    Case("study-selftest-missing-tasks", ["study", "selftest", "--tasks", "{root}/nosuch.json"],
         ["{root}/nosuch.json"], r"no such file"),
    Case("study-selftest-not-a-snapshot", ["study", "selftest", "--snapshot", "{root}/empty"], ["{root}/empty"],
         r"not a snapshot"),
    Case("study-selftest-tasks-without-study", ["study", "selftest", "--tasks", "{root}/no-workflows.json"],
         ["{root}/no-workflows.json"], r"no 'study' section"),
    Case("study-views-tasks-not-json", ["study", "views", "--tasks", "{root}/bad.json", "-o", "{root}/views"],
         ["{root}/bad.json"], r"not valid JSON"),
    Case("study-views-out-is-a-file", ["study", "views", "--snapshot", "{study}", "-o", "{root}/notes.txt"],
         ["{root}/notes.txt"], r"file of that name"),
    Case("study-views-out-inside-a-file", ["study", "views", "--snapshot", "{study}", "-o", "{root}/notes.txt/views"],
         ["{root}/notes.txt/views"], r"is a file, not a folder"),
    Case("study-run-pages-twice", ["study", "run", "--registration", "reg", "--pages", "article,article",
                                   "--results", "{root}/results"], ["--pages", "article"], r"twice"),
    Case("study-run-ray-address-without-ray", ["study", "run", "--registration", "reg", "--ray-address",
                                               "127.0.0.1:6379", "--results", "{root}/results"], ["--ray-address"],
         r"needs --backend ray"),
    Case("study-run-repeats-zero", ["study", "run", "--registration", "reg", "--repeats", "0",
                                    "--results", "{root}/results"], ["--repeats", "0"], r"at least 1"),
    Case("study-run-unknown-provider", ["study", "run", "--registration", "reg", "--provider", "openai",
                                        "--results", "{root}/results"], ["--provider", "openai"], r"invalid choice"),
    Case("study-run-no-such-registration", ["study", "run", "--registration", "nosuch",
                                            "--results", "{root}/results"],
         ["{root}/results/registrations/nosuch.json"], r"no such registration"),
    Case("study-run-unknown-page", ["study", "run", "--registration", "reg", "--pages", "nosuch",
                                    "--results", "{root}/project/results"], ["--pages", "nosuch"], r"no page",
         _project),
    Case("study-run-bad-run-id", ["study", "run", "--registration", "reg", "--run-id", "../x",
                                  "--results", "{root}/project/results"], ["../x"], r"letters, digits", _project),
    Case("study-run-provider-the-settings-cannot-take",
         ["study", "run", "--registration", "reg", "--provider", "openai_compatible",
          "--results", "{root}/project/results"], ["--provider openai_compatible"], r"thinking",
         lambda root: _project(root, thinking=True)),
    Case("study-report-not-a-run", ["study", "report", "{root}/empty"], ["{root}/empty"], r"not a study run folder"),
    # run
    Case("run-unknown-task", ["run", "--agent", "gold", "--tasks", "{tasks}", "--task", "nosuch"], ["nosuch"],
         r"no workflow task"),
    Case("run-task-twice", ["run", "--agent", "gold", "--tasks", "{tasks}", "--task", WORKFLOW_TASK,
                            "--task", WORKFLOW_TASK], ["--task", WORKFLOW_TASK], r"twice"),
    Case("run-agent-twice", ["run", "--agent", "gold", "--agent", "gold", "--tasks", "{tasks}"], ["--agent", "gold"],
         r"twice"),
    Case("run-unknown-agent", ["run", "--agent", "nobody", "--tasks", "{tasks}"], ["nobody"], r"unknown agent"),
    Case("run-benchmark-and-tasks", ["run", "--agent", "gold", "--tasks", "{tasks}", "--benchmark", "{root}/empty"],
         ["--benchmark", "--tasks"], r"not both"),
    Case("run-benchmark-without-tasks", ["run", "--agent", "gold", "--benchmark", "{root}/empty"],
         ["tasks.json"], r"no such file"),
    Case("benchmark-unknown-application", ["benchmark", "start", "nosuch"], ["nosuch"], r"no benchmark application"),
    Case("benchmark-tasks-without-recipes", ["benchmark", "tasks", "--benchmark", "{root}/empty"], ["empty"],
         r"no recipes"),
    Case("run-repeats-zero", ["run", "--agent", "gold", "--tasks", "{tasks}", "--repeats", "0"], ["--repeats"],
         r"at least 1"),
    Case("run-browsers-on-ray", ["run", "--agent", "gold", "--tasks", "{tasks}", "--backend", "ray", "--browsers",
                                 "2"], ["--browsers"], r"local backend"),
    Case("run-ray-address-without-ray", ["run", "--agent", "gold", "--tasks", "{tasks}", "--ray-address",
                                         "127.0.0.1:6379"], ["--ray-address"], r"needs --backend ray"),
    Case("run-unknown-backend", ["run", "--agent", "gold", "--tasks", "{tasks}", "--backend", "slurm"],
         ["--backend", "slurm"], r"invalid choice"),
    Case("run-browsers-not-a-number", ["run", "--agent", "gold", "--tasks", "{tasks}", "--browsers", "two"],
         ["--browsers", "two"], r"at least 1"),
    Case("run-missing-tasks", ["run", "--agent", "gold", "--tasks", "{root}/nosuch.json"], ["{root}/nosuch.json"],
         r"no such file"),
    Case("run-tasks-not-json", ["run", "--agent", "gold", "--tasks", "{root}/bad.json"], ["{root}/bad.json"],
         r"not valid JSON"),
    Case("run-invalid-tasks", ["run", "--agent", "gold", "--tasks", "{root}/invalid-tasks.json"],
         ["{root}/invalid-tasks.json", "snapshots"], r"invalid tasks file"),
    Case("run-tasks-without-workflows", ["run", "--agent", "gold", "--tasks", "{root}/no-workflows.json"],
         ["{root}/no-workflows.json"], r"no 'workflows' section"),
    Case("run-snapshot-not-a-snapshot", ["run", "--agent", "gold", "--tasks", "{tasks}", "--snapshot", "{root}/empty"],
         ["{root}/empty"], r"not a snapshot"),
    Case("run-no-such-registration", ["run", "--agent", "gold", "--tasks", "{tasks}", "--registration", "nosuch",
                                      "--results", "{root}/results"], ["{root}/results/registrations/nosuch.json"],
         r"no such registration"),
    Case("run-bad-run-id", ["run", "--agent", "gold", "--tasks", "{tasks}", "--run-id", "../x"], ["../x"],
         r"letters, digits"),
    Case("run-snapshot-not-the-registered-one",
         ["run", "--agent", "gold", "--tasks", "{root}/project/tasks.json", "--registration", "reg",
          "--results", "{root}/project/results", "--snapshot", "{study}"], ["--snapshot", "{study}"],
         r"registered", _project),
    Case("run-results-is-a-file", ["run", "--agent", "gold", "--tasks", "{tasks}", "--task", WORKFLOW_TASK,
                                   "--results", "{root}/notes.txt"], ["{root}/notes.txt"], r"not a directory"),
    Case("run-shard-out-of-range", ["run", "--agent", "gold", "--tasks", "{tasks}", "--shard", "2/2"],
         ["--shard", "2/2"], r"shard 2 of 2 does not exist: I counts from 0"),
    Case("run-shard-not-a-fraction", ["run", "--agent", "gold", "--tasks", "{tasks}", "--shard", "1"],
         ["--shard", "'1'"], r"must be I/N"),
    Case("run-merge-not-a-run", ["run", "merge", "{root}/empty"], ["{root}/empty"], r"not an agent run folder"),
    Case("run-merge-missing-shard", ["run", "merge", "{root}/results/runs/exp.shard-0-of-2"],
         ["{root}/results/runs/exp.shard-1-of-2"], r"gap: shard 1 of 2 is missing",
         lambda root: _shards(root, missing=True)),
    Case("run-merge-unfinished-shard", ["run", "merge", "{root}/results/runs/exp.shard-0-of-2",
                                        "{root}/results/runs/exp.shard-1-of-2"],
         ["{root}/results/runs/exp.shard-1-of-2"], r"gap: 1 of its 10 episodes are not recorded",
         lambda root: _shards(root, unfinished=True)),
    Case("run-merge-shard-twice", ["run", "merge", "{root}/results/runs/exp.shard-0-of-2",
                                   "{root}/results/runs/exp.shard-1-of-2", "{root}/results/runs/again"],
         ["{root}/results/runs/again", "{root}/results/runs/exp.shard-1-of-2"], r"overlap: claims shard 1 of 2",
         lambda root: _shards(root, twice=True)),
    Case("run-merge-into-an-existing-run", ["run", "merge", "{root}/results/runs/exp.shard-0-of-2",
                                            "{root}/results/runs/exp.shard-1-of-2"],
         ["{root}/results/runs/exp"], r"already exists", lambda root: _shards(root, merged=True)),
    Case("run-merge-bad-run-id", ["run", "merge", "{root}/results/runs/exp.shard-0-of-2",
                                  "{root}/results/runs/exp.shard-1-of-2", "--run-id", "../x"],
         ["../x"], r"letters, digits", _shards),
    # judge
    Case("judge-not-a-run", ["judge", "{root}/empty"], ["{root}/empty"], r"not an agent run folder"),
    Case("judge-score-missing-folder", ["judge", "score", "{root}/nosuch"], ["{root}/nosuch"],
         r"not an agent run folder"),
    Case("judge-make-rubric-unknown-task", ["judge", "make-rubric", "--task", "nosuch", "--tasks", "{tasks}",
                                            "--cache", "{root}/cache"], ["nosuch", "{tasks}"], r"no workflow task"),
    Case("judge-make-rubric-missing-tasks", ["judge", "make-rubric", "--task", "t", "--tasks", "{root}/nosuch.json",
                                             "--cache", "{root}/cache"], ["{root}/nosuch.json"], r"no such file"),
    Case("judge-make-rubric-tasks-without-workflows",
         ["judge", "make-rubric", "--task", "t", "--tasks", "{root}/no-workflows.json", "--cache", "{root}/cache"],
         ["{root}/no-workflows.json"], r"no 'workflows' section"),
    Case("judge-agreement-missing-labels", ["judge", "agreement", "{root}/nosuch.jsonl", "--verdicts",
                                            "{root}/labels.jsonl"], ["{root}/nosuch.jsonl"], r"no such file"),
    Case("judge-agreement-bad-labels", ["judge", "agreement", "{root}/bad-labels.jsonl", "--verdicts",
                                        "{root}/labels.jsonl"], ["{root}/bad-labels.jsonl", "line 1"], r"pass"),
    Case("judge-agreement-missing-verdicts", ["judge", "agreement", "{root}/labels.jsonl", "--verdicts",
                                              "{root}/nosuch.jsonl"], ["{root}/nosuch.jsonl"], r"no such file"),
    # report
    Case("report-not-a-run", ["report", "{root}/empty", "-o", "{root}/report"], ["{root}/empty"], r"not a study run"),
    Case("report-missing-folder", ["report", "{root}/nosuch"], ["{root}/nosuch"], r"no run\.json"),
    Case("report-judge-kind-not-a-run", ["report", "{root}/empty", "--kind", "judge"], ["{root}/empty"],
         r"not an agent run folder"),
    Case("report-unknown-kind", ["report", "{root}/empty", "--kind", "nosuch"], ["--kind", "nosuch"],
         r"invalid choice"),
    Case("report-out-is-a-file", ["report", "{root}/empty", "-o", "{root}/notes.txt"], ["{root}/notes.txt"],
         r"a file of that name exists"),
    Case("report-out-inside-a-file", ["report", "{root}/empty", "-o", "{root}/notes.txt/report"],
         ["{root}/notes.txt/report"], r"is a file, not a folder"),
]  # fmt: skip


# -- running them ------------------------------------------------------------------------------------------------


@dataclass
class Ran:
    """How one ``python -m capreplay ...`` ended (``returncode`` None: killed after ``TIMEOUT``)."""

    args: list[str]
    returncode: int | None
    stdout: str
    stderr: str

    def describe(self) -> str:
        return (f"`capreplay {' '.join(self.args)}` -> status {self.returncode}\n"
                f"stdout: {self.stdout[:500]!r}\nstderr: {self.stderr[-2000:]!r}")  # fmt: skip


def _run(args: list[str], cwd: Path) -> Ran:
    started = start(args, cwd=cwd)
    if started.wait(TIMEOUT) is None:
        # A run that did not refuse its input (serve serving, a capture or a browser started): kill its session.
        started.kill()
        return Ran(args, None, *started.output())
    return Ran(args, started.returncode, *started.output())


def tree(root: Path) -> dict[str, bytes | str | None]:
    """Every path under ``root``: a file's bytes, a folder as None, a symlink (not followed) as its target."""
    found: dict[str, bytes | str | None] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            key = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[key] = str(os.readlink(path))
            else:
                found[key] = None if path.is_dir() else path.read_bytes()
    return found


@dataclass
class Started:
    root: Path
    case: Case
    before: dict[str, bytes | str | None]
    future: Future[Ran] = field(repr=False)


@pytest.fixture(scope="module")
def started(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Started]]:
    """Make the inputs of every selected case, then start them all; yields them by case id."""
    here = Path(__file__).resolve()
    params = [item.callspec.params for item in request.session.items
              if Path(item.path).resolve() == here and hasattr(item, "callspec")]  # fmt: skip
    wanted = {p["case"].id for p in params if "case" in p}
    base = tmp_path_factory.mktemp("user-errors")
    runs: dict[str, Started] = {}
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for case in CASES:
            if case.id not in wanted:
                continue
            root = base / case.id
            (root / "cwd").mkdir(parents=True)
            _inputs(root)
            if case.setup is not None:
                case.setup(root)
            args = [case.fill(a, root) for a in case.args]
            runs[case.id] = Started(root, case, tree(root), pool.submit(_run, args, root / "cwd"))
        yield runs


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_user_mistake_is_one_line_exit_2_and_writes_nothing(started: dict[str, Started], case: Case) -> None:
    """Exit status 2; exactly one line on stderr, ``capreplay VERB: ...``, naming the file or option and the
    problem; no traceback; nothing on stdout; the case's folder unchanged."""
    run = started[case.id]
    ran = run.future.result(timeout=TIMEOUT + 30)
    assert ran.returncode == 2, f"expected exit status 2\n{ran.describe()}"
    assert "Traceback" not in ran.stderr + ran.stdout, f"a traceback for a user mistake\n{ran.describe()}"
    lines = ran.stderr.splitlines()
    assert len(lines) == 1, f"expected exactly one line on stderr, got {len(lines)}\n{ran.describe()}"
    assert lines[0].startswith("capreplay "), ran.describe()
    for name in case.names:
        needle = case.fill(name, run.root)
        assert needle in lines[0], f"the line does not name {needle!r}\n{ran.describe()}"
    assert re.search(case.problem, lines[0], re.IGNORECASE), f"the line does not say /{case.problem}/\n{ran.describe()}"
    assert ran.stdout == "", f"printed on stdout, so it went ahead\n{ran.describe()}"
    after = tree(run.root)
    added = sorted(set(after) - set(run.before))
    changed = sorted(p for p in set(after) & set(run.before) if after[p] != run.before[p])
    removed = sorted(set(run.before) - set(after))
    assert not (added or changed or removed), f"it wrote: added {added}, changed {changed}, removed {removed}"


# -- in-process: the crawl options and --plan, and the defaults in --help ------------------------------------


def test_crawl_options_change_the_crawl_of_a_plan(tmp_path: Path) -> None:
    """With --plan, --depth and --max-pages replace the plan's crawl limits and --same-site turns its rule on;
    the pages and actions of the plan stay as they were."""
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({
        "pages": [{"url": SHOP, "actions": [{"type": "autoscroll", "max_steps": 3}]}],
        "crawl": {"seeds": [SHOP], "depth": 1, "max_pages": 50, "same_site": False},
    }))  # fmt: skip
    plan = load_plan(path)
    assert with_crawl_options(plan, path, depth=None, max_pages=None, same_site=False) == plan
    merged = with_crawl_options(plan, path, depth=3, max_pages=7, same_site=True)
    assert merged.crawl is not None and (merged.crawl.depth, merged.crawl.max_pages, merged.crawl.same_site) == (
        3, 7, True)  # fmt: skip
    assert merged.pages == plan.pages and merged.crawl.seeds == [SHOP]
    only_depth = with_crawl_options(plan, path, depth=2, max_pages=None, same_site=False)
    assert only_depth.crawl is not None and (only_depth.crawl.max_pages, only_depth.crawl.same_site) == (50, False)


def test_crawl_options_are_refused_where_nothing_is_crawled(tmp_path: Path) -> None:
    """A plan without a crawl section, or URLs without --depth/--max-pages, have nothing for them to change."""
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"pages": [{"url": SHOP}]}))
    with pytest.raises(UsageError, match=r"no 'crawl' section for --max-pages, --same-site"):
        with_crawl_options(load_plan(path), path, depth=None, max_pages=4, same_site=True)
    with pytest.raises(UsageError, match=r"--same-site needs --depth or --max-pages"):
        plan_from_urls([SHOP], depth=None, max_pages=None, same_site=True)
    crawl = plan_from_urls([SHOP], depth=None, max_pages=4, same_site=True)
    assert crawl.crawl is not None and crawl.crawl.same_site and crawl.crawl.depth == 1


def _actions(parser: argparse.ArgumentParser, name: str) -> Iterator[tuple[str, argparse.Action]]:
    for step, sub in subcommands(parser).items():
        yield from _actions(sub, f"{name} {step}")
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
            yield name, action


def test_every_option_with_a_default_says_it_in_its_help() -> None:
    """--help names the default of every option that has one (tests/cli/test_help.py checks that every option
    has a help text at all)."""
    missing = []
    for verb, action in _actions(build_parser(), "capreplay"):
        flags = "/".join(action.option_strings) or action.dest
        if action.default not in (None, False, [], argparse.SUPPRESS) and "default" not in (action.help or ""):
            missing.append(f"{verb} {flags}: help does not say its default {action.default!r}")
    assert not missing, "\n".join(missing)


def test_run_id_help_says_the_default_the_code_uses() -> None:
    """`run --run-id` defaults to the registration id, else the agents joined by '-' (what run folders are named)."""
    parser = build_parser()
    (run,) = [a for verb, a in _actions(parser, "capreplay") if verb == "capreplay run start" and a.dest == "run_id"]
    assert run.help is not None and "joined by '-'" in run.help and "hash" not in run.help
