/* Memory out of sight in inotify event queues: eight instances watch /tmp,
 * and each file made and removed there queues two events in each, its
 * 200-byte name in every one: 32768 events an instance, about 36 MiB in all
 * under a 16 MiB limit, read back and checked. Where inotify is refused the
 * program fails (RE); it must never get AC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#define INSTANCES 8
#define FILES 8192
#define NAME 200

static void name_of(int i, char *name) {
    memset(name, 'a' + i % 26, NAME);
    snprintf(name, 16, "%08d", i);
    name[8] = '-';
    name[NAME] = '\0';
}

int main(void) {
    int fds[INSTANCES];
    for (int k = 0; k < INSTANCES; k++) {
        fds[k] = inotify_init1(IN_NONBLOCK);
        if (fds[k] < 0 || inotify_add_watch(fds[k], "/tmp", IN_CREATE | IN_DELETE) < 0) {
            perror("inotify");
            return 1;
        }
    }
    char name[NAME + 1], path[NAME + 8];
    for (int i = 0; i < FILES; i++) {
        name_of(i, name);
        snprintf(path, sizeof path, "/tmp/%s", name);
        FILE *f = fopen(path, "w");
        if (!f) return 2;
        fclose(f);
        unlink(path);
    }
    static char buf[1 << 16];
    long seen = 0;
    for (int k = 0; k < INSTANCES; k++) {
        ssize_t n;
        while ((n = read(fds[k], buf, sizeof buf)) > 0) {
            for (char *p = buf; p < buf + n;) {
                struct inotify_event *e = (struct inotify_event *)p;
                name_of(atoi(e->name), name);
                if (e->len && strcmp(e->name, name) == 0) seen++;
                p += sizeof *e + e->len;
            }
        }
    }
    printf("%s\n", seen == (long)INSTANCES * 2 * FILES ? "all read back" : "lost some");
    return 0;
}
