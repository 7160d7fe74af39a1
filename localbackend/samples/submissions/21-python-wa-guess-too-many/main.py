# Counts up from 1: right in the end, but far over the guesses allowed.
n = int(input())
for guess in range(1, n + 1):
    print(guess, flush=True)
    if input().strip() == '=':
        break
