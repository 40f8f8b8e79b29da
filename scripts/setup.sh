#!/usr/bin/env bash
# Set up capreplay: Python 3.12, uv, the locked .venv, Chromium + fonts, strace, npm (and wrk if apt has it).
# Idempotent: a second run installs nothing and takes a few seconds.
# Run it (bash scripts/setup.sh) or source it: sourcing leaves $UV (absolute path to uv) and
# $UV_PYTHON exported and the cwd at the repo root, which is how demo.sh and test.sh use it.
# Overrides: CAPREPLAY_PYTHON (a Python 3.12 to use), CAPREPLAY_UV (a uv binary), CAPREPLAY_CHROMIUM.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

_say() { echo "setup: $*" >&2; }
_die() { echo "setup: ERROR: $*" >&2; exit 1; }

# --- 1. A Python 3.12 that really runs (resolved to an absolute path, never a shim) ------------------
_py312() {  # print the interpreter's path if it is a working 3.12; $2=1: a venv's python maps to its base
    "$1" -c 'import sys
assert sys.version_info[:2] == (3, 12)
print(getattr(sys, "_base_executable", sys.executable) if sys.argv[1] == "1" else sys.executable)' "$2" 2>/dev/null
}
_find_python() {
    local c
    if [[ -n "${CAPREPLAY_PYTHON:-}" ]]; then _py312 "$CAPREPLAY_PYTHON" 0; return; fi
    for c in "$(command -v python3.12 || true)" \
        "$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")"/versions/3.12*/bin/python3.12; do
        [[ -n "$c" && -x "$c" ]] && _py312 "$c" 1 && return 0
    done
    return 1
}
PY="$(_find_python)" || _die "no working Python 3.12 found${CAPREPLAY_PYTHON:+ (CAPREPLAY_PYTHON=$CAPREPLAY_PYTHON is not one)}. Install one (e.g. 'pyenv install 3.12') or set CAPREPLAY_PYTHON=/path/to/python3.12."
export UV_PYTHON="$PY" UV_PYTHON_DOWNLOADS=never

# --- 2. uv: CAPREPLAY_UV, else the one installed in that Python, else uv on PATH, else pip-install it --
_uv_ok() { [[ -n "$1" && -x "$1" ]] && "$1" --version >/dev/null 2>&1; }
_uv_in_py() { "$PY" -c 'import uv; print(uv.find_uv_bin())' 2>/dev/null || true; }
_find_uv() {
    local u
    if [[ -n "${CAPREPLAY_UV:-}" ]]; then _uv_ok "$CAPREPLAY_UV" && echo "$CAPREPLAY_UV"; return; fi
    u="$(_uv_in_py)"; _uv_ok "$u" && { echo "$u"; return 0; }
    u="$(command -v uv || true)"
    [[ "$u" == */shims/uv ]] && u="$(pyenv which uv 2>/dev/null || true)"  # a pyenv shim: resolve it
    _uv_ok "$u" && { echo "$u"; return 0; }
    return 1
}
if ! UV="$(_find_uv)"; then
    [[ -n "${CAPREPLAY_UV:-}" ]] && _die "CAPREPLAY_UV=$CAPREPLAY_UV does not run."
    _say "uv not found; installing it with pip into $PY"
    "$PY" -m pip install --quiet --disable-pip-version-check uv 2>/dev/null ||
        "$PY" -m pip install --quiet --disable-pip-version-check --user uv ||
        _die "could not 'pip install uv' into $PY. Install uv (https://docs.astral.sh/uv/) and set CAPREPLAY_UV."
    UV="$(_uv_in_py)"
    _uv_ok "$UV" || _die "uv was pip-installed into $PY but does not run."
fi
export UV

# --- 3. The locked virtualenvs: .venv (with the dev group), then each adapter's (adapters/*/.venv) ------
# Bytecode is compiled at install time, as pip does by default and uv does not: where PYTHONDONTWRITEBYTECODE
# is set (container images often set it), Python never writes a .pyc, so every process would otherwise
# compile its imports from source again (capreplay serve took 1.3-1.8 s to start instead of 0.6 s).
"$UV" sync --locked --quiet --compile-bytecode --extra ray ||
    _die "'uv sync --locked' failed (is uv.lock out of date? run 'uv lock')."
# The browser-use adapter: its own uv project and lock, so browser-use's exact pins never touch the core's.
"$UV" sync --locked --quiet --compile-bytecode --project adapters/browser_use ||
    _die "'uv sync --locked --project adapters/browser_use' failed (is adapters/browser_use/uv.lock out of date?)."
# The Stagehand adapter: its own project too (Stagehand needs a websockets that browser-use's pins exclude).
"$UV" sync --locked --quiet --compile-bytecode --project adapters/stagehand ||
    _die "'uv sync --locked --project adapters/stagehand' failed (is adapters/stagehand/uv.lock out of date?)."
"$UV" sync --locked --quiet --compile-bytecode --project adapters/browsergym ||
    _die "'uv sync --locked --project adapters/browsergym' failed (is adapters/browsergym/uv.lock out of date?)."
# The project's own sources are installed editable, so uv leaves them to Python: compile them too (a changed
# file is compiled again in memory, its stale .pyc ignored).
"$PY" -m compileall -q -j 0 src adapters/*/src >/dev/null || _die "compiling src and adapters/*/src failed."

# --- 4. System packages: Chromium + fonts (required), strace and npm (tests), wrk (benchmarks, optional) ---
_find_chromium() {
    local c
    if [[ -n "${CAPREPLAY_CHROMIUM:-}" ]]; then [[ -x "$CAPREPLAY_CHROMIUM" ]] && echo "$CAPREPLAY_CHROMIUM"; return; fi
    for c in "${PLAYWRIGHT_BROWSERS_PATH:-$HOME/.cache/ms-playwright}"/chromium-*/chrome-linux*/chrome \
        /usr/lib/chromium/chromium; do
        [[ -x "$c" ]] && { echo "$c"; return 0; }
    done
    return 1
}
_have_cmd() { local p; p="$(type -P "$1")" && [[ -x "$p" ]]; }  # bash's command -v may report non-executables
_have_pkg() { [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == *" installed" ]]; }
SUDO=""
if [[ "$(id -u)" != 0 ]] && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo -n"; fi
CAN_APT=""
if command -v apt-get >/dev/null && command -v dpkg >/dev/null && [[ "$(id -u)" == 0 || -n "$SUDO" ]]; then CAN_APT=1; fi

CHROMIUM="$(_find_chromium || true)"
need=()
[[ -z "$CHROMIUM" && -z "${CAPREPLAY_CHROMIUM:-}" ]] && need+=(chromium)
command -v dpkg >/dev/null && for p in fonts-liberation fonts-dejavu-core; do _have_pkg "$p" || need+=("$p"); done
_have_cmd strace || need+=(strace)
# The real-application tests take GraphiQL's unpkg.com scripts from the npm registry (npm pack).
_have_cmd npm || need+=(npm)
NO_WRK=.venv/.capreplay-apt-has-no-wrk  # remembered so later runs don't re-run a slow apt-get update for it
want_wrk=""; _have_cmd wrk || [[ -e "$NO_WRK" ]] || want_wrk=1
if (( ${#need[@]} )) || [[ -n "$want_wrk" ]]; then
    if [[ -n "$CAN_APT" ]]; then
        _say "installing with apt: ${need[*]} ${want_wrk:+wrk}"
        log="$(mktemp)"
        { $SUDO apt-get update -qq && { (( ! ${#need[@]} )) ||
            DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"; }; } >"$log" 2>&1 ||
            { cat "$log" >&2; _die "apt-get install ${need[*]} failed (log above)."; }
        [[ -z "$want_wrk" ]] || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wrk >"$log" 2>&1 ||
            { touch "$NO_WRK"; _say "note: apt could not install wrk (optional, only for benchmarks)"; }
        rm -f "$log"
        CHROMIUM="$(_find_chromium || true)"
    fi
fi
if [[ -z "$CHROMIUM" && -z "${CAPREPLAY_CHROMIUM:-}" ]]; then
    _say "no Chromium found: trying 'playwright install chromium' (60 s limit)"
    timeout 60 "$UV" run --locked playwright install chromium >/dev/null 2>&1 || true
    CHROMIUM="$(_find_chromium || true)"
fi
[[ -n "$CHROMIUM" || -z "${CAPREPLAY_CHROMIUM:-}" ]] || _die "CAPREPLAY_CHROMIUM=$CAPREPLAY_CHROMIUM is not executable: fix or unset it."
[[ -n "$CHROMIUM" ]] || _die "no Chromium found. As root run: apt-get install -y chromium fonts-liberation fonts-dejavu-core strace  (or 'uv run playwright install chromium', or set CAPREPLAY_CHROMIUM=/path/to/chrome)."
missing=()
_have_cmd strace || missing+=(strace)
_have_cmd npm || missing+=(npm)
command -v dpkg >/dev/null && for p in fonts-liberation fonts-dejavu-core; do _have_pkg "$p" || missing+=("$p"); done
(( ! ${#missing[@]} )) || _say "warning: missing ${missing[*]} (as root: apt-get install -y ${missing[*]}). \
The fonts make pages render as intended; strace and npm are needed by the test suite."

_say "ok: python $("$PY" -c 'import platform; print(platform.python_version())') ($PY), \
$("$UV" --version | cut -d' ' -f1-2) ($UV), chromium $CHROMIUM"
