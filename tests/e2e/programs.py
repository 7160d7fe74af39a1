"""Submissions for the verdicts the samples in localbackend/samples lack, all for
sample problem 1 (A + B, two tasks of two cases, 1000 ms, 64 MiB)."""

C_MLE = b'''#include <stdlib.h>
#include <string.h>
int main(void) {
    for (;;) {
        char *p = malloc(1 << 20);
        memset(p, 1, 1 << 20);
    }
}
'''

CPP_WA = b'''#include <iostream>
int main() {
    long long a, b;
    std::cin >> a >> b;
    std::cout << a - b << '\\n';
}
'''

CPP_CE = b'''#include <iostream>
int main() {
    std::cout << undeclared_name << '\\n';
}
'''

CPP_RE = b'''#include <iostream>
#include <stdexcept>
int main() {
    long long a, b;
    std::cin >> a >> b;
    throw std::runtime_error("no answer today");
}
'''

CPP_TLE = b'''int main() {
    volatile unsigned long spin = 0;
    for (;;) spin++;
}
'''

CPP_OLE = b'''#include <iostream>
#include <string>
int main() {
    std::string chunk(1 << 20, 'y');
    for (int i = 0; i < 48; i++) std::cout << chunk;
}
'''

PYTHON_TLE = b'''while True:
    pass
'''

PYTHON_OLE = b'''import sys

chunk = 'y' * (1 << 20)
for _ in range(48):
    sys.stdout.write(chunk)
'''

# A + B, slowly: it sleeps before answering, so a job stays in flight for a
# while without spending CPU time (well under the 3 x limit + 1 s wall bound).
SLOW_AC_C = b'''#include <stdio.h>
#include <unistd.h>
int main(void) {
    long long a, b;
    if (scanf("%lld %lld", &a, &b) != 2) return 1;
    sleep(1);
    printf("%lld\\n", a + b);
    return 0;
}
'''

AC_PYTHON = b'''a, b = map(int, input().split())
print(a + b)
'''
