import sys

_, output, answer = sys.argv[1:4]
try:
    got = float(open(output).read().split()[0])
except (ValueError, IndexError):
    print("not a number", file=sys.stderr)
    sys.exit(2)
want = float(open(answer).read())
if abs(got - want) <= 1e-6 * max(1.0, abs(want)):
    print(f"ok {got}", file=sys.stderr)
    sys.exit(0)
print(f"expected {want}, got {got}", file=sys.stderr)
sys.exit(1)
