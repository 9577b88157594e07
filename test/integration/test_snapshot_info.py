"""crmpi_info --snapshot: the snapshot decoder, on snapshots built by snapshot_builder.py
(fake images in the documented format; no CRIU, no job).

Checks what a user reads: the committed sequences, each sequence's state, ranks, hosts,
sizes, launch options and rank facts; --verify's verdict and the sequence a restart would
use; and one clear line for a handle that does not exist.
"""

import json
import os
import subprocess

import pytest

import snapshot_builder

INSTALL = os.environ.get("CRMPI_INSTALL", os.path.join(os.path.dirname(__file__), "../../install"))
CRMPI_INFO = os.path.join(INSTALL, "bin", "crmpi_info")


def info(*args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRMPI_")}
    env["CRMPI_PARAM_FILE"] = ""
    env.update(env_extra or {})
    return subprocess.run([CRMPI_INFO, *args], capture_output=True, text=True, env=env,
                          timeout=60)


def field(out, label):
    """The value after "<label>: " on the first line that has it."""
    for line in out.splitlines():
        if line.strip().startswith(label + ":"):
            return line.split(":", 1)[1].strip()
    raise AssertionError("no '%s' line in:\n%s" % (label, out))


@pytest.fixture
def snapshot(tmp_path):
    return snapshot_builder.build(str(tmp_path), committed=(1, 2))


def test_decode(snapshot):
    result = info("--snapshot", snapshot)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert field(out, "Snapshot") == snapshot
    assert field(out, "Job") == "4711"
    assert field(out, "Committed sequences") == "1, 2 (newest 2)"
    assert field(out, "Sequence 2") == "committed (newest)"
    assert field(out, "Sequence 1") == "committed"
    assert field(out, "Ranks") == "2, 6.2 KiB (6379 bytes) in all"
    assert field(out, "Program") == "./ring -n 5"
    assert field(out, "Launch options") == "np=2, map-by=core"
    assert field(out, "BTLs") == "self,sm"
    assert field(out, "CRS") == "criu 4.1.1"
    assert field(out, "Timings") == "quiesce 0.002 s, dump 0.250 s, filem 0.500 s"
    assert field(out, "Rank 1") == "host node1, 4 files, 3.1 KiB (3190 bytes)"
    assert "crcp.drained = 4" in out
    assert 'crs.masks = ["0x1","0x2"]' in out
    assert field(out, "Checksums") == "not verified (add --verify to read every file)"
    # Newest first: the order a restart tries them in.
    assert out.index("Sequence 2:") < out.index("Sequence 1:")
    assert result.stderr == ""


def test_verify_intact(snapshot):
    result = info("--snapshot", snapshot, "--verify")
    assert result.returncode == 0, result.stdout + result.stderr
    assert field(result.stdout, "Checksums") == "verified: all 8 files intact"
    assert field(result.stdout, "Restart would use") == "sequence 2"


def test_verify_damaged_names_the_file(snapshot):
    snapshot_builder.damage(snapshot, 2, 1, "criu/pages-1.img")
    result = info("--snapshot", snapshot, "--verify")
    assert result.returncode == 1
    assert ("DAMAGED: rank 1's image checksum does not match (rank.1/criu/pages-1.img)"
            in result.stdout)
    assert field(result.stdout, "Restart would use") == "sequence 1"


def test_verify_nothing_intact(snapshot):
    snapshot_builder.damage(snapshot, 2, 0, "rank.json")
    os.unlink(os.path.join(snapshot, "1", "rank.1", "criu", "core-1.img"))
    result = info("--snapshot", snapshot, "--verify")
    assert result.returncode == 1
    assert "rank 1's image is missing (rank.1/criu/core-1.img)" in result.stdout
    assert field(result.stdout, "Restart would use") == \
        "nothing: no committed sequence is intact"


def test_abandoned_sequences_are_shown(snapshot):
    snapshot_builder.add_sequence(snapshot, 3, commit=False)
    os.makedirs(os.path.join(snapshot, "4.partial", "rank.0"))
    result = info("--snapshot", snapshot)
    assert result.returncode == 0, result.stderr
    assert field(result.stdout, "Sequence 3") == "complete but never committed (abandoned)"
    assert field(result.stdout, "Sequence 4") == "partial (being written, or abandoned)"
    assert field(result.stdout, "Committed sequences") == "1, 2 (newest 2)"


def test_unknown_fields_and_newer_version(snapshot):
    path = os.path.join(snapshot, "2", "manifest.json")
    with open(path) as f:
        manifest = json.load(f)
    manifest["from_the_future"] = {"x": [1, 2]}
    manifest["ranks"][0]["numa"] = "node0"
    with open(path, "w") as f:
        json.dump(manifest, f)
    result = info("--snapshot", snapshot)
    assert result.returncode == 0, result.stderr
    assert field(result.stdout, "Sequence 2") == "committed (newest)"

    manifest["version"] = 2
    with open(path, "w") as f:
        json.dump(manifest, f)
    result = info("--snapshot", snapshot)
    assert field(result.stdout, "Sequence 2").startswith("broken")
    assert ("has format version 2; this crmpi reads crmpi-snapshot-manifest up to version 1"
            in result.stdout)


def test_handle_by_jobid(snapshot):
    parent = os.path.dirname(snapshot)
    result = info("--snapshot", "4711",
                  env_extra={"CRMPI_MCA_snapc_base_global_snapshot_dir": parent})
    assert result.returncode == 0, result.stderr
    assert field(result.stdout, "Snapshot") == snapshot


def test_missing_handle(tmp_path):
    missing = str(tmp_path / "999.ckpt")
    result = info("--snapshot", missing)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "crmpi_info: error: snapshot handle '%s' does not exist (no such directory); "
        "ompi-checkpoint prints the handle as its last line" % missing]


def test_nothing_committed(tmp_path):
    jobdir = tmp_path / "5.ckpt"
    (jobdir / "1.partial").mkdir(parents=True)
    result = info("--snapshot", str(jobdir))
    assert result.returncode == 1
    assert field(result.stdout, "Committed sequences").startswith("none (no snapshot.json")
    assert field(result.stdout, "Sequence 1") == "partial (being written, or abandoned)"


def test_usage_errors(snapshot):
    result = info("--verify")
    assert result.returncode == 2
    assert "--verify and --files go with --snapshot HANDLE" in result.stderr
    result = info("--snapshot")
    assert result.returncode == 2
    assert "--snapshot needs a HANDLE" in result.stderr
    result = info("--help")
    assert "--snapshot HANDLE" in result.stdout and "--verify" in result.stdout


def test_files_listing(snapshot):
    result = info("--snapshot", snapshot, "--files")
    assert result.returncode == 0, result.stderr
    # sha256("core"), its size, its path: what sha256sum would print, plus the size.
    assert ("0d45f5fd462b8c70bffb10021ac1bcff3f58f29b1faf7568595095427d42812c  4  "
            "criu/core-1.img") in result.stdout
