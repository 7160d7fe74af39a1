int main(void) {
    volatile unsigned long spin = 0;
    for (;;) spin++;
}
