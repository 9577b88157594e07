"""The predefined communicators', datatypes' and ops' sizes in libmpi are fixed (1024, 512
and 256 bytes, mpi_internal.h), so that a program linked against one libmpi keeps working with a
later one: the linker copies MPI_COMM_WORLD, MPI_INT, ... into the program at the size it
sees at link time, and an object that grew would be written past the program's copy."""
import os
import re
import subprocess

import pytest

from conftest import INSTALL


def object_sizes():
    """{symbol: size} of libmpi's exported data objects."""
    lib = os.path.join(INSTALL, "lib", "libmpi.so")
    if not os.path.exists(lib):
        pytest.skip("no libmpi.so in %s" % INSTALL)
    out = subprocess.run(["readelf", "--dyn-syms", "-W", lib], capture_output=True, text=True,
                         check=True).stdout
    return {m.group(2): int(m.group(1)) for m in
            re.finditer(r"^\s*\d+: [0-9a-f]+\s+(\d+) OBJECT .* (crmpi_mpi_\w+)$", out, re.M)}


def test_predefined_communicators_have_a_fixed_size():
    sizes = object_sizes()
    assert sizes.get("crmpi_mpi_comm_world") == 1024, sizes
    assert sizes.get("crmpi_mpi_comm_self") == 1024, sizes


@pytest.mark.parametrize("name", ["crmpi_mpi_int", "crmpi_mpi_double", "crmpi_mpi_byte",
                                  "crmpi_mpi_double_int", "crmpi_mpi_packed",
                                  "crmpi_mpi_integer", "crmpi_mpi_double_precision",
                                  "crmpi_mpi_2real", "crmpi_mpi_complex16", "crmpi_mpi_lb",
                                  "crmpi_mpi_ub"])
def test_predefined_datatypes_have_a_fixed_size(name):
    assert object_sizes().get(name) == 512


@pytest.mark.parametrize("name", ["crmpi_mpi_op_sum", "crmpi_mpi_op_maxloc", "crmpi_mpi_op_replace",
                                  "crmpi_mpi_op_no_op"])
def test_predefined_ops_have_a_fixed_size(name):
    """The op object grew once (MPI_Op_create_c's function) and programs linked before
    warned "Symbol `crmpi_mpi_op_land' has different size"; they are in 256-byte blocks."""
    assert object_sizes().get(name) == 256
