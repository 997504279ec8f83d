# Shared by bin/demo and bin/test: find an interpreter and make/refresh a venv.
# Sourced, not run. Needs nothing but a Python 3.11+ with venv and pip.

find_python() {  # find_python 3.13 -> path to a python3.13, or nothing
    local version="$1" candidate
    for candidate in "python$version" "$(command -v pyenv >/dev/null 2>&1 && pyenv root)/versions/$version"*/bin/"python$version" /root/.pyenv/versions/"$version"*/bin/"python$version" /usr/bin/"python$version" /usr/local/bin/"python$version"; do
        if [ -n "$candidate" ] && "$candidate" -c 'import sys' >/dev/null 2>&1; then
            command -v "$candidate" 2>/dev/null || echo "$candidate"
            return 0
        fi
    done
    return 1
}

pip_install() {  # pip_install VENV ARGS...: quiet, minus this machine's index-location noise
    # --no-compile: byte-compiling every installed module was three quarters of the CPU
    # of a fresh venv; Python compiles (and caches) the few that are imported on first use.
    local venv="$1"; shift
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-compile "$@" 2>&1 \
        | { grep -v "is neither a file nor a directory" || true; }
    return "${PIPESTATUS[0]}"
}

venv_is_stale() {  # venv_is_stale PYTHON DIR FILES...: create DIR; true when FILES changed since the last install
    local python="$1" dir="$2"; shift 2
    if [ ! -x "$dir/bin/python" ]; then
        echo "==> creating $dir with $("$python" --version)"
        "$python" -m venv "$dir"
    fi
    [ "$(cat "$dir/.stamp" 2>/dev/null)" != "$(cat "$@" | sha256sum | cut -c1-16)" ]
}

stamp_venv() {  # stamp_venv DIR FILES...: remember what DIR was installed from
    local dir="$1"; shift
    cat "$@" | sha256sum | cut -c1-16 > "$dir/.stamp"
}

ensure_venv() {  # ensure_venv PYTHON DIR [REQUIREMENTS]: DIR holds REQUIREMENTS (requirements.txt) and the package
    local python="$1" dir="$2" requirements="${3:-requirements.txt}"
    if venv_is_stale "$python" "$dir" "$requirements" pyproject.toml; then
        echo "==> installing $requirements into $dir"
        pip_install "$dir" --upgrade pip
        pip_install "$dir" -r "$requirements"
        pip_install "$dir" --no-deps -e .
        stamp_venv "$dir" "$requirements" pyproject.toml
    fi
}

ensure_tool_venv() {  # ensure_tool_venv PYTHON DIR REQUIREMENTS: DIR holds only REQUIREMENTS
    local python="$1" dir="$2" requirements="$3"
    if venv_is_stale "$python" "$dir" "$requirements"; then
        echo "==> installing $requirements into $dir"
        pip_install "$dir" -r "$requirements"
        stamp_venv "$dir" "$requirements"
    fi
}
