import math
print(f"{math.sqrt(int(input())):.4f}")
