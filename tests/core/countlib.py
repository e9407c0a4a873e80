"""Reads the count.<tool>.<rank>.txt files that the test count tools write."""
import os


def read_counts(workdir, tool, rank):
    counts = {}
    with open(os.path.join(workdir, "count.%s.%d.txt" % (tool, rank))) as f:
        for line in f:
            name, n = line.split()
            counts[name] = int(n)
    return counts
