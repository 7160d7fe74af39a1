lo, hi = 1, int(input())
while lo <= hi:
    mid = (lo + hi) // 2
    print(mid, flush=True)
    reply = input().strip()
    if reply == '=':
        break
    if reply == '>':
        lo = mid + 1
    else:
        hi = mid - 1
