#include <cstdio>
int main() { int *p = nullptr; std::printf("%d\n", *p); }
