/* Prints "fresh" unless an earlier case left a mark: each case must start clean. */
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
int main(void) {
    int id = shmget(0x4a554447, 4096, IPC_CREAT | 0600);
    char *m = shmat(id, 0, 0);
    puts(m != (char *)-1 && m[0] ? "persisted" : "fresh");
    if (m != (char *)-1) strcpy(m, "mark");
    return 0;
}
