/*
 * What the supervisor's run init and the Python zygote (python_zygote.c) say
 * to each other on the zygote's socket (descriptor 3 of the zygote, a
 * SOCK_SEQPACKET pair): the zygote says ZYGOTE_READY once its interpreter
 * is up; each request is one struct spawn, with SPAWN_FDS descriptors
 * (stdin, stdout, stderr, the report pipe) as SCM_RIGHTS; each answer is the
 * pid of the case's process (an int32), -1 when none was made, or
 * ZYGOTE_UNKNOWN.
 */
#ifndef JUDGE_ZYGOTE_H
#define JUDGE_ZYGOTE_H

#include <linux/filter.h>
#include <stdint.h>
#include <sys/resource.h>

/* The .pth file that has site call the zygote's serve() (build-zygote.sh):
 * without it a zygote would run the script. */
#define ZYGOTE_HOOK "/usr/lib/python3/dist-packages/judge_zygote.pth"
/* In the environment python3 starts with, to be a zygote: taken out at once. */
#define ZYGOTE_MARKER "JUDGE_ZYGOTE"
#define ZYGOTE_SOCKET_FD 3
/* The Landlock ruleset the zygote's domain was made of: each case's process
 * nests a domain of its own in it. */
#define ZYGOTE_RULESET_FD 4
#define ZYGOTE_READY 0
/* An answer: whether a process of the case was made is not known (the
 * child that forks it died), so it may have run. */
#define ZYGOTE_UNKNOWN (-2)

#define SPAWN_MAGIC 0x7a79676fu
#define SPAWN_FDS 4
#define SPAWN_LIMITS 8
#define SPAWN_MAX_FILTER 256
/* A limit's value: this many (bytes, seconds, descriptors), or one of these. */
#define SPAWN_INHERIT (-2)
#define SPAWN_INFINITY (-1)

struct spawn_limit {
    int32_t resource; /* RLIMIT_* */
    int32_t unused;
    int64_t value;
};

struct spawn {
    uint32_t magic;
    uint32_t uid; /* the run's: the case's process becomes it, and drops every capability */
    uint32_t filter_len;
    uint32_t unused;
    struct spawn_limit limits[SPAWN_LIMITS];
    char workdir[64];
    struct sock_filter filter[SPAWN_MAX_FILTER];
};

/* Soft and hard limit alike; -1 when it cannot be set. */
static inline int spawn_apply_limit(const struct spawn_limit *limit) {
    if (limit->value == SPAWN_INHERIT) return 0;
    if (limit->value < SPAWN_INFINITY) return -1;
    rlim_t v = limit->value == SPAWN_INFINITY ? RLIM_INFINITY : (rlim_t)limit->value;
    struct rlimit rl = {v, v};
    return setrlimit(limit->resource, &rl);
}

static inline int spawn_apply_limits(const struct spawn_limit limits[SPAWN_LIMITS]) {
    for (int i = 0; i < SPAWN_LIMITS; i++)
        if (spawn_apply_limit(&limits[i]) < 0) return -1;
    return 0;
}

#endif
