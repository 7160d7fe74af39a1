#include <vector>
int main() {
    std::vector<char> v(1ull << 34);
    return v[12];
}
