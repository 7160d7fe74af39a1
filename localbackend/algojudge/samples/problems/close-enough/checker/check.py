"""SIO2's convention: OK or WRONG, a comment, a percentage; always exit 0."""
import sys

_, _, output, answer = sys.argv
try:
    got = float(open(output).read().split()[0])
except (IndexError, ValueError):
    print('WRONG\nno number was printed')
    sys.exit(0)
error = abs(got - float(open(answer).read()))
if error <= 1e-6:
    print('OK')
elif error <= 1e-3:
    print(f'OK\noff by {error:.1e}\n50')
else:
    print(f'WRONG\noff by {error:.1e}')
