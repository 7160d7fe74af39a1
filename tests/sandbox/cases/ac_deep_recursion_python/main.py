# A deep recursion in Python, as students write their DFS.
import sys

sys.setrecursionlimit(10**6)


def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)


print(depth(200000))
