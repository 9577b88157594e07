#!/usr/bin/python3
"""Draw bandwidth against message size from a bench/netpipe results directory.

Usage: bench/netpipe/plot.py RESULTS_DIR

Reads every transport pair's NetPIPE outputs (crmpi-<t>.np.out and Open MPI's, the best of
the rounds when there were several) and writes RESULTS_DIR/bandwidth.png: one panel per
pair, bandwidth in GB/s (10^9 B/s) against the message size, crmpi and Open MPI on the same
axes, and under them the ratio crmpi / Open MPI at the sizes both measured. Exit 0 with
the file written; 1 when there is nothing to draw; 2 when python3-matplotlib is missing
(said in one line).
"""
import os
import sys

# Transport pairs in run.sh's order: crmpi's label, Open MPI's label, the panel's title.
PAIRS = [
    ("sm", "openmpi-vader", "shared memory: btl sm / btl vader"),
    ("tcp", "openmpi-tcp", "TCP: btl tcp / btl tcp"),
    ("ofi", "openmpi-ofi", "libfabric: btl ofi / mtl ofi"),
    ("ofi-place", "openmpi-ofi", "libfabric: btl ofi placed / mtl ofi"),
    ("ucx", "openmpi-ucx", "UCX: btl ucx / pml ucx"),
    ("ucx-place", "openmpi-ucx", "UCX: btl ucx placed / pml ucx"),
]


def read_np_out(path):
    """NetPIPE's output: {bytes: GB/s}. Its Mbps column is 2^20 bit/s."""
    points = {}
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 2:
                points[int(fields[0])] = float(fields[1]) * 2**20 / 8 / 1e9
    return points


def mode_of(results):
    """'cached' or '-I (cache invalidated)', from the run's env.txt."""
    try:
        with open(os.path.join(results, "env.txt")) as f:
            options = [line for line in f if line.startswith("netpipe options:")]
    except OSError:
        return ""
    return "-I (cache invalidated)" if options and " -I " in options[0] else "cached"


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) == 2 else 2
    results = sys.argv[1]
    pairs = []
    for transport, ompi, title in PAIRS:
        files = [os.path.join(results, name + ".np.out") for name in ("crmpi-" + transport, ompi)]
        # A placement variant has a panel only when it ran (its Open MPI run is the plain one's).
        placed_only = transport.endswith("-place")
        if os.path.exists(files[0]) or (not placed_only and os.path.exists(files[1])):
            pairs.append((title, [read_np_out(f) if os.path.exists(f) else {} for f in files]))
    if not pairs:
        print("plot: no NetPIPE outputs (*.np.out) in %s" % results, file=sys.stderr)
        return 1
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot: no plot: python3-matplotlib is not installed", file=sys.stderr)
        return 2
    fig, axes = plt.subplots(2, len(pairs), figsize=(max(6.5, 4.5 * len(pairs)), 6.5), squeeze=False,
                             sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    for col, (title, (crmpi, ompi)) in enumerate(pairs):
        top, bottom = axes[0][col], axes[1][col]
        for points, label, style in ((crmpi, "crmpi", "-"), (ompi, "Open MPI", "--")):
            if points:
                sizes = sorted(points)
                top.plot(sizes, [points[s] for s in sizes], style, label=label)
        both = sorted(set(crmpi) & set(ompi))
        if both:
            bottom.plot(both, [crmpi[s] / ompi[s] if ompi[s] else float("nan") for s in both],
                        color="black")
        bottom.axhline(1.0, color="grey", linewidth=0.8)
        top.set_title(title, fontsize=10)
        top.set_xscale("log", base=2)
        top.grid(True, which="both", alpha=0.3)
        bottom.grid(True, which="both", alpha=0.3)
        bottom.set_xlabel("message size (bytes)")
        top.legend(fontsize=8)
        if col == 0:
            top.set_ylabel("bandwidth (GB/s)")
            bottom.set_ylabel("crmpi / Open MPI")
    fig.suptitle("NetPIPE ping-pong, 2 ranks on one node, %s" % mode_of(results), fontsize=11)
    fig.tight_layout()
    out = os.path.join(results, "bandwidth.png")
    fig.savefig(out, dpi=100)
    print("plot: %s" % out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
