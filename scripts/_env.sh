# Sourced by scripts/quickstart and scripts/test: choose the Python that runs footprint_lab,
# and install the project into it once, again only when pyproject.toml changes.
#
# By default that Python is a project-local virtual environment, .venv/, made from the newest
# python3.13 ... python3.11 (or python3, python) on the PATH, so nothing is installed into the
# system's Python (Debian, Ubuntu 23.04+ and Homebrew refuse that: PEP 668). Someone who manages
# their own environment (conda, an active venv, a CI image) sets FOOTPRINT_LAB_PYTHON to that
# environment's interpreter, and the project is installed there instead.
#
# After `fl_prepare EXTRA`, "$FL_PYTHON" is the interpreter to run everything with.

FL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FL_VENV="$FL_ROOT/.venv"

fl_say() { echo "footprint_lab: $*" >&2; }

# The first interpreter on the PATH that is Python 3.11 or newer.
fl_find_python() {
  local name
  for name in python3.13 python3.12 python3.11 python3 python; do
    if command -v "$name" >/dev/null 2>&1 &&
       "$name" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then
      command -v "$name"
      return 0
    fi
  done
  return 1
}

# Make sure `python -m venv` can build an environment with pip in it (Debian splits that out).
fl_ensure_venv_module() {
  local python=$1 package
  "$python" -c 'import venv, ensurepip' >/dev/null 2>&1 && return 0
  package="python3-venv"
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    fl_say "$python cannot build a virtual environment; installing Debian's $package with apt-get"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null
    "$python" -c 'import venv, ensurepip' >/dev/null 2>&1 && return 0
  fi
  fl_say "ERR_NO_VENV: $python cannot build a virtual environment (its venv/ensurepip modules are missing)."
  if command -v apt-get >/dev/null 2>&1; then
    fl_say "Fix: sudo apt-get install $package   (then run this command again)"
  else
    fl_say "Fix: install your Python's venv support, or set FOOTPRINT_LAB_PYTHON to a Python you manage."
  fi
  exit 1
}

# fl_prepare EXTRA: pick or build the environment, install ".[EXTRA]" unless it is already there.
fl_prepare() {
  local extra=$1 base stamp hash
  if [ -n "${FOOTPRINT_LAB_PYTHON:-}" ]; then
    FL_PYTHON=$FOOTPRINT_LAB_PYTHON
    "$FL_PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1 || {
      fl_say "ERR_PYTHON_TOO_OLD: FOOTPRINT_LAB_PYTHON must name a Python 3.11 or newer that runs."
      fl_say "Fix: point it at such an interpreter, or unset it to use a project-local .venv."
      exit 1
    }
    stamp="$("$FL_PYTHON" -c 'import sys; print(sys.prefix)')/.footprint-lab-installed"
    fl_say "using FOOTPRINT_LAB_PYTHON=$FL_PYTHON (your own environment)"
  else
    if [ ! -x "$FL_VENV/bin/python" ]; then
      base=$(fl_find_python) || {
        fl_say "ERR_NO_PYTHON: no Python 3.11 or newer on the PATH (looked for python3.13 ... python3.11, python3, python)."
        fl_say "Fix: install Python 3.11+ (Debian/Ubuntu: sudo apt-get install python3 python3-venv), or set FOOTPRINT_LAB_PYTHON."
        exit 1
      }
      fl_ensure_venv_module "$base"
      fl_say "creating $FL_VENV with $base ($("$base" -c 'import sys; print(sys.version.split()[0])'))"
      "$base" -m venv "$FL_VENV"
    fi
    FL_PYTHON="$FL_VENV/bin/python"
    stamp="$FL_VENV/.footprint-lab-installed"
    fl_say "using $FL_VENV (Python $("$FL_PYTHON" -c 'import sys; print(sys.version.split()[0])'))"
  fi
  # The stamp holds one line per extra installed, with the hash of the pyproject.toml it came from.
  hash=$("$FL_PYTHON" -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' \
         "$FL_ROOT/pyproject.toml")
  if [ -f "$stamp" ] && grep -qxF "$extra $hash" "$stamp"; then
    fl_say "footprint_lab[$extra] is installed and pyproject.toml is unchanged: nothing to install"
    return 0
  fi
  fl_say "installing footprint_lab[$extra] (and what it needs) into that environment"
  if [ "$extra" = test ] &&
     ! "$FL_PYTHON" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("llama_cpp") is None)' 2>/dev/null; then
    fl_say "the first time, pip builds llama.cpp from source for the real-model tests (about 10 minutes on 2 cores); later installs reuse the wheel it built"
    if ! command -v c++ >/dev/null 2>&1; then
      if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        fl_say "installing Debian's C++ compiler to build llama.cpp"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ >/dev/null
      else
        fl_say "ERR_NO_COMPILER: building llama.cpp needs a C++ compiler. Fix: sudo apt-get install g++"
        exit 1
      fi
    fi
  fi
  "$FL_PYTHON" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore -e "$FL_ROOT[$extra]"
  # Lines from an older pyproject.toml are dropped; the test extra includes the notebook, real-model and docs extras.
  { grep " $hash\$" "$stamp" 2>/dev/null || true
    echo "$extra $hash"
    if [ "$extra" = test ]; then echo "notebook $hash"; echo "real-model $hash"; echo "docs $hash"; fi
  } | sort -u > "$stamp.new"
  mv "$stamp.new" "$stamp"
}
