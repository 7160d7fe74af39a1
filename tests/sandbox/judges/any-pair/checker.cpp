// Any two positive integers that sum to n are right.
#include "testlib.h"
int main(int argc, char **argv) {
    if (argc < 4) quitf(_fail, "usage: checker input output answer");
    FILE *in = std::fopen(argv[1], "r"), *out = std::fopen(argv[2], "r");
    long long n, a, b;
    if (!in || std::fscanf(in, "%lld", &n) != 1) quitf(_fail, "bad input");
    if (!out || std::fscanf(out, "%lld %lld", &a, &b) != 2) quitf(_pe, "expected two integers");
    if (a < 1 || b < 1 || a + b != n) quitf(_wa, "%lld + %lld is not %lld", a, b, n);
    quitf(_ok, "%lld + %lld = %lld", a, b, n);
}
