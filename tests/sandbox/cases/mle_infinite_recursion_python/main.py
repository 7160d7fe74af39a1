# Recursion without end, the recursion limit lifted: MLE, never a crash of the judge.
import sys

sys.setrecursionlimit(10**9)


def down(n):
    return down(n + 1) + 1


print(down(0))
