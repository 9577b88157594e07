"""Build a global snapshot directory by hand, in the on-disk format of filem/snapshot.h
(docs/design.md, "Snapshots on disk"), with fake image files: no CRIU and no job needed.

Written independently of the C writer on purpose: a decoder that reads what this builds
reads the documented format, not just what its own library happens to write.
"""

import hashlib
import json
import os


def _write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)


def _sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def add_sequence(jobdir, seq, nranks=2, jobid=4711, pages_bytes=3000, commit=True,
                 hosts=None):
    """Write sequence `seq` (fake images, rank.json, manifest.json); with `commit`, add it
    to snapshot.json as the newest committed sequence. Returns the sequence directory."""
    seq_dir = os.path.join(jobdir, str(seq))
    ranks = []
    for rank in range(nranks):
        rank_dir = os.path.join(seq_dir, "rank.%d" % rank)
        os.makedirs(os.path.join(rank_dir, "criu"))
        contents = {
            "criu/core-1.img": b"core",
            "criu/inventory.img": b"inventory",
            "criu/pages-1.img": bytes((i * 7 + rank * 13 + seq) % 256
                                      for i in range(pages_bytes + rank)),
        }
        for rel, data in contents.items():
            with open(os.path.join(rank_dir, rel), "wb") as f:
                f.write(data)
        _write_json(os.path.join(rank_dir, "rank.json"), {
            "format": "crmpi-rank", "version": 1, "rank": rank,
            "crs": {"affinity": "0-1", "masks": ["0x1", "0x2"]},
            "crcp": {"drained": 3 + rank},
        })
        files = []
        for rel in sorted(list(contents) + ["rank.json"]):
            path = os.path.join(rank_dir, rel)
            files.append({"path": rel, "size": os.path.getsize(path), "sha256": _sha256(path)})
        ranks.append({"rank": rank, "host": (hosts or {}).get(rank, "node%d" % (rank % 2)),
                      "bytes": sum(f["size"] for f in files), "files": files})
    _write_json(os.path.join(seq_dir, "manifest.json"), {
        "format": "crmpi-snapshot-manifest", "version": 1, "jobid": jobid, "seq": seq,
        "state": "complete", "created": "2026-11-22T06:00:00Z", "nranks": nranks,
        "bytes": sum(r["bytes"] for r in ranks), "crs": "criu 4.1.1", "btls": "self,sm",
        "argv": ["./ring", "-n", "5"], "launch": {"np": str(nranks), "map-by": "core"},
        "mca": {"btl": "self,sm"}, "timings": {"quiesce": 0.002, "dump": 0.25, "filem": 0.5},
        "ranks": ranks,
    })
    if commit:
        record = os.path.join(jobdir, "snapshot.json")
        seqs = []
        if os.path.exists(record):
            with open(record) as f:
                seqs = json.load(f)["sequences"]
        seqs.append(seq)
        _write_json(record, {"format": "crmpi-snapshot", "version": 1, "jobid": jobid,
                             "latest": seq, "sequences": seqs,
                             "updated": "2026-11-22T06:00:01Z"})
    return seq_dir


def build(parent, jobid=4711, committed=(1, 2), nranks=2):
    """<parent>/<jobid>.ckpt with the given committed sequences; returns its path."""
    jobdir = os.path.join(parent, "%d.ckpt" % jobid)
    os.makedirs(jobdir)
    for seq in committed:
        add_sequence(jobdir, seq, nranks=nranks, jobid=jobid)
    return jobdir


def damage(jobdir, seq, rank, rel):
    """Flip the first byte of one file (same size: only the checksum can tell)."""
    path = os.path.join(jobdir, str(seq), "rank.%d" % rank, rel)
    with open(path, "r+b") as f:
        first = f.read(1)
        f.seek(0)
        f.write(bytes([first[0] ^ 0xFF]))
