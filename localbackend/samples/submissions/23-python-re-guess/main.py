n = int(input())
print(n // 2, flush=True)
reply = input()
raise RuntimeError(f'cannot handle {reply!r}')
