# Guess the number, replying straight to fd 1 (as fast-output code does,
# os.write(1, ...)), and thinking a little before each reply. The program
# says its last guess and ends without waiting for the "=", as a correct
# program may: the decision (exit 0) must stand although the "=" finds the
# program gone (the relay drops it; fd 1 never fails).
import os, sys, time
n, limit = map(int, open(sys.argv[1]).read().split())
secret = int(open(sys.argv[3]).read())
os.write(1, f'{n}\n'.encode())
for q in range(1, limit + 1):
    guess = int(input())
    time.sleep(0.05)
    if guess == secret:
        os.write(1, b'=\n')
        print(f'found {secret} in {q} guesses', file=sys.stderr)
        sys.exit(0)
    os.write(1, b'>\n' if guess < secret else b'<\n')
sys.exit(1)
