/* Once: 639 MiB kept in unix socket buffers under a 64 MiB limit, read back,
 * AC with 1.3 MB reported. Sockets are refused to runs. */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
int main(void) {
    static char block[1 << 16];
    memset(block, 7, sizeof block);
    long kept = 0;
    for (int n = 0; n < 60; n++) {
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) < 0) {
            perror("socketpair");
            return 1;
        }
        int big = 64 << 20;
        setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
        setsockopt(pair[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
        ssize_t w;
        while ((w = send(pair[0], block, sizeof block, MSG_DONTWAIT)) > 0) kept += w;
    }
    printf("%ld\n", kept >> 20);
    return 0;
}
