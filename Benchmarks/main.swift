// The benchmark harness entry point; see Benchmarks/README.md.
print("runloopkit-bench: the harness is being written")
