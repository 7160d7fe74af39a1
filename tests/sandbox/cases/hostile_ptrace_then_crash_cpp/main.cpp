// The same with an uncaught exception (abort) after a right answer.
#include <iostream>
#include <stdexcept>
#include <sys/ptrace.h>
int main() {
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    std::cout << 42 << std::endl;
    throw std::runtime_error("after the answer");
}
