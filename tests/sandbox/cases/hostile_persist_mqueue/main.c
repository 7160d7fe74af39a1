/* Prints "fresh" unless an earlier case left a POSIX message queue behind. */
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
int main(void) {
    mqd_t q = mq_open("/mark", O_RDONLY);
    puts(q != (mqd_t)-1 ? "persisted" : "fresh");
    struct mq_attr a = {.mq_maxmsg = 1, .mq_msgsize = 8};
    mq_open("/mark", O_RDONLY | O_CREAT, 0600, &a);
    return 0;
}
