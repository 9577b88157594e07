"""The predefined communicators' size in libmpi is fixed (1024 bytes, mpi_internal.h), so
that a program linked against one libmpi keeps working with a later one: the linker copies
MPI_COMM_WORLD and MPI_COMM_SELF into the program at the size it sees at link time, and a
communicator that grew would be written past the program's copy."""
import os
import re
import subprocess

import pytest

from conftest import INSTALL


def test_predefined_communicators_have_a_fixed_size():
    lib = os.path.join(INSTALL, "lib", "libmpi.so")
    if not os.path.exists(lib):
        pytest.skip("no libmpi.so in %s" % INSTALL)
    out = subprocess.run(["readelf", "--dyn-syms", "-W", lib], capture_output=True, text=True,
                         check=True).stdout
    sizes = {m.group(2): int(m.group(1)) for m in
             re.finditer(r"^\s*\d+: [0-9a-f]+\s+(\d+) OBJECT .* (crmpi_mpi_comm_(?:world|self))$",
                          out, re.M)}
    assert sizes == {"crmpi_mpi_comm_world": 1024, "crmpi_mpi_comm_self": 1024}, sizes
