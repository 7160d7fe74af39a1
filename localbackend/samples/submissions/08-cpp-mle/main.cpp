#include <cstdio>
#include <vector>

int main() {
    std::vector<char> block(512u << 20, 1);
    long sum = 0;
    for (std::size_t i = 0; i < block.size(); i += 4096) sum += block[i];
    std::printf("%ld\n", sum);
    return 0;
}
