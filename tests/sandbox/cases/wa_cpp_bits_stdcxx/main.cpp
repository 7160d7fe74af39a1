// The header most competitive C++ starts with; the image has it precompiled.
#include <bits/stdc++.h>
using namespace std;
int main() {
    int n;
    cin >> n;
    vector<long long> v(n);
    for (auto &x : v) cin >> x;
    sort(v.begin(), v.end());
    map<long long, int> seen;
    for (auto x : v) seen[x]++;
    cout << accumulate(v.begin(), v.end(), 0LL) << ' ' << seen.size() << ' ' << v.back() << '\n';
#ifdef __OPTIMIZE__
    cerr << "optimized\n";
#endif
}
