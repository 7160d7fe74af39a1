# Guess the number: the input holds N and the number of guesses allowed,
# the answer the number. Exit codes as testlib's.
import os, sys

# A common fast-output idiom: a line-buffered stream on stdout's descriptor.
sys.stdout = os.fdopen(sys.stdout.fileno(), 'w', buffering=1)

n, limit = map(int, open(sys.argv[1]).read().split())
secret = int(open(sys.argv[3]).read())
print(n, flush=True)
for q in range(1, limit + 1):
    line = input()
    try:
        guess = int(line)
    except ValueError:
        print(f'guess {q} is not a number', file=sys.stderr)
        sys.exit(2)
    if guess == secret:
        print('=', flush=True)
        print(f'found {secret} in {q} guesses', file=sys.stderr)
        sys.exit(0)
    print('>' if guess < secret else '<', flush=True)
print(f'not found in {limit} guesses', file=sys.stderr)
sys.exit(1)
