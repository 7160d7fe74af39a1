/* A notice of what others do to a folder of the image: its copy in memory is
 * shared by every container, so a directory notice (F_NOTIFY) would fire when
 * a run of another job, or another case of this one, reads a file there: a
 * live channel between them. F_NOTIFY, F_SETSIG, F_SETLEASE and F_SETOWN are
 * refused. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static void say(const char *what, int r) {
    printf("%s %s\n", what, r == -1 && errno == EPERM ? "refused" : "allowed");
}

int main(void) {
    int dir = open("/usr/share", O_RDONLY | O_DIRECTORY);
    int file = open("/etc/passwd", O_RDONLY);
    if (dir < 0 || file < 0) return 1;
    say("setsig", fcntl(dir, F_SETSIG, SIGRTMIN + 1));
    say("notify", fcntl(dir, F_NOTIFY, DN_ACCESS | DN_MULTISHOT));
    say("lease", fcntl(file, F_SETLEASE, F_RDLCK));
    say("setown", fcntl(file, F_SETOWN, getpid()));
    struct f_owner_ex owner = {F_OWNER_TID, gettid()};
    say("setown_ex", fcntl(file, F_SETOWN_EX, &owner));
    return 0;
}
