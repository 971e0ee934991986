# shellcheck shell=bash
# What a kernel oops looks like in a kernel log, for guest-init.sh (which ends the run at the
# first one) and run-rxe-tests.sh (which prints it): sourced by both.
OOPS_RE='Oops:|kernel BUG at|BUG: unable to handle|BUG: kernel NULL pointer|general protection fault|list_(add|del) corruption|soft lockup'

# The first oops in a kernel log (a file, or stdin), from its first line: what went wrong, where,
# the call trace and the modules loaded; not the registers and code bytes.
oops_report() {
  sed -n '/cut here\|list_del corruption\|list_add corruption\|BUG: \|general protection fault\|Oops:\|soft lockup/,$p' "$@" \
    | grep -vE '^(\[ *[0-9.]+\] )?(Code:|RSP:|RAX:|RDX:|RBP:|R10:|R13:|FS:|CS:|CR2:|PKRU:|Hardware name:)' \
    | head -"${OOPS_LINES:-60}"
}

# The interop test a guest run was in: the last "[interop +12.3s] test name()" line of its log.
last_test() {
  grep -E '^\[[a-z-]+ \+[0-9.]+s\] test ' "$1" 2>/dev/null | tail -1
}
