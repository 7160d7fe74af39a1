#!/bin/sh
# Installs the Python zygote (python_zygote.c): the extension module, and
# the .pth file through which site has every python3 call its serve(),
# which returns at once unless python3 was started as a zygote (supervisor.c,
# start_zygote), into Debian's own site folder (zygote.h, ZYGOTE_HOOK).
set -eu
here="$(dirname "$0")"
site=/usr/lib/python3/dist-packages
include="$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("INCLUDEPY"))')"
suffix="$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"
mkdir -p "$site"
gcc -O2 -Wall -shared -fPIC -I"$include" -I"$here" -o "$site/_judge_zygote$suffix" \
    "$here/python_zygote.c"
echo "import _judge_zygote, sys; _judge_zygote.serve(); del sys.modules['_judge_zygote']" \
    >"$site/judge_zygote.pth"
# Taken by python3 as it is started for a case, and leaving nothing behind.
python3 -c 'import sys; assert "_judge_zygote" not in sys.modules' >/dev/null
python3 -c 'import _judge_zygote' >/dev/null
