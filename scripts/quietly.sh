# Sourced by the build scripts: `quietly CMD...` runs a step with its output
# kept aside (pages of debootstrap or pip), and on failure shows its end.
quietly() {
    local log
    log="$(mktemp)"
    "$@" >"$log" 2>&1 || {
        tail -n 30 "$log" >&2
        echo "failed: $* (full log: $log)" >&2
        exit 1
    }
    rm -f "$log"
}
