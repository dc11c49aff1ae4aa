"""What the tests and the benchmarks share: the whole-stack launcher (stack.py)."""
