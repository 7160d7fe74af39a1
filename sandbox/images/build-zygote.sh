#!/bin/sh
# Builds the Python zygote (python_zygote.c) into $1: linked, as python3 is,
# against the static library of the image's own Python, with the same
# modules and flags, so that a case runs in the interpreter python3 is.
set -eu
eval "$(python3 - <<'PY'
import shlex
import sysconfig
v = sysconfig.get_config_var
for name, value in (('library', f"{v('LIBPL')}/{v('LIBRARY')}"), ('include', v('INCLUDEPY')),
                    ('libs', f"{v('MODLIBS')} {v('LIBS')} {v('SYSLIBS')}"),
                    ('link', v('LINKFORSHARED'))):
    print(f'{name}={shlex.quote(value)}')
PY
)"
here="$(dirname "$0")"
# shellcheck disable=SC2086 # the library lists are lists of words
gcc -O2 -Wall -s -no-pie -I"$include" -I"$here" -o "$1" "$here/python_zygote.c" "$library" $libs $link
