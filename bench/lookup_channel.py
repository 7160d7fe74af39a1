"""Whether a name one job looks up is faster to look up for a later job, in one run.

    python -m bench.lookup_channel [--names 2000] [--no-copy] [--json]

A first job (the sender) looks up names that do not exist in three folders
of its sandbox: an image folder, the root and /box. A later job (the
receiver), in the same container after its reset, times a lookup of each of
those names and of as many names nobody looked up. Where the directory
cache kept the sender's names, the receiver finds them faster: that is a
message any later run can read (sandbox/image_copy.py says why the runs'
folders are tmpfs, which keeps no such entry). Prints, per folder, the
median lookup of both kinds and their ratio (about 1.0: nothing passes;
`--no-copy` runs from the image's own folders, the baseline). Figures are
printed, never asserted. About 10 s.
"""
import argparse
import json
import pathlib
import secrets
import tempfile
import uuid

import docker

from bench.sandboxes import running
from sandbox.job import CaseSpec, SandboxJob
from sandbox.languages import Language
from sandbox.settings import SandboxSettings

FOLDERS = ('/usr/lib/x86_64-linux-gnu', '/', '/box')

PROGRAM = r'''
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static long long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int order(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static long long timed(const char *path) {
    struct stat st;
    long long start = now();
    stat(path, &st);
    return now() - start;
}

int main(void) {
    char mode[16], path[512];
    unsigned long long seed;
    int n;
    if (scanf("%15s %llu %d", mode, &seed, &n) != 3 || n < 1) return 1;
    const char *folders[] = {%FOLDERS%};
    long long *sent = calloc(n, sizeof *sent), *fresh = calloc(n, sizeof *fresh);
    for (size_t f = 0; f < sizeof folders / sizeof *folders; f++) {
        const char *sep = strcmp(folders[f], "/") ? "/" : "";
        for (int i = 0; i < n; i++) {
            snprintf(path, sizeof path, "%s%ss%llu-%d", folders[f], sep, seed, i);
            sent[i] = timed(path);
            if (strcmp(mode, "receive")) continue;
            snprintf(path, sizeof path, "%s%sf%llu-%d", folders[f], sep, seed, i);
            fresh[i] = timed(path);
        }
        if (strcmp(mode, "receive")) continue;
        qsort(sent, n, sizeof *sent, order);
        qsort(fresh, n, sizeof *fresh, order);
        printf("%s %lld %lld\n", folders[f], sent[n / 2], fresh[n / 2]);
    }
    return 0;
}
'''.replace('%FOLDERS%', ', '.join(f'"{f}"' for f in FOLDERS))


def run_job(sandbox, folder: pathlib.Path, message: str) -> str:
    """A job of its own whose one case gets `message` as its input: its stdout."""
    src = folder / 'src'
    src.mkdir(parents=True)
    (src / 'main.c').write_text(PROGRAM)
    (folder / 'in').write_text(message + '\n')
    (folder / 'out').write_text('')
    job = SandboxJob(key=f'lookups-{uuid.uuid4()}', language=Language.C, source_dir=src)
    try:
        built = sandbox.compile(job)
        assert built.ok, built
        return sandbox.run_case(job, CaseSpec(folder / 'in', folder / 'out', 10000, 65536)).stdout
    finally:
        sandbox.release(job.key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--names', type=int, default=2000)
    parser.add_argument('--no-copy', action='store_true', help="runs in the image's own folders")
    parser.add_argument('--json', action='store_true', help='print the figures as one JSON object')
    args = parser.parse_args()
    client = docker.from_env(timeout=60)
    seed = secrets.randbits(48)  # names no earlier run of this looked up
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        settings = SandboxSettings(root=tmp / 'root',
                                   max_containers=1,
                                   spares_per_image=0,
                                   image_copy=not args.no_copy)
        with running(settings, client) as sandbox:
            run_job(sandbox, tmp / 'sender', f'send {seed} {args.names}')
            answer = run_job(sandbox, tmp / 'receiver', f'receive {seed} {args.names}')
    figures = {}
    for line in answer.splitlines():
        folder, sent_ns, fresh_ns = line.split()
        figures[folder] = {
            'sent_ns': int(sent_ns),
            'never_ns': int(fresh_ns),
            'ratio': int(fresh_ns) / max(1, int(sent_ns))
        }
    if args.json:
        print(json.dumps({'copy': not args.no_copy, 'names': args.names, 'folders': figures}))
        return
    print(f'a later job\'s lookups ({"image copy" if not args.no_copy else "image folders"}, '
          f'median of {args.names} names each):')
    for folder, f in figures.items():
        print(f'  {folder:28} looked up before {f["sent_ns"]:6} ns   never {f["never_ns"]:6} ns'
              f'   ({f["ratio"]:.2f}x)')


if __name__ == '__main__':
    main()
