/* The compiler's message would show the host's paths. */
#include "/proc/self/mountinfo"
int main(void) { return 0; }
