# test/fuzz/fuzz.mk: the fuzz targets, built with clang's libFuzzer. run.sh runs this file
# in build-fuzz/ (make -f TOP/test/fuzz/fuzz.mk TOP=... CONFIG_DIR=..., the directory of a
# configured build's config.h). Plain make, not automake: the targets need clang, which the
# ordinary build does not.
#
# Each target links the crmpi sources of the reader it exercises, compiled here with the
# sanitizers and libFuzzer's coverage; the fuzzer's own main comes with -fsanitize=fuzzer.

CC = clang
SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
CFLAGS = -g -O1 -std=gnu11 -Wall -Wextra -Wno-unused-parameter $(SANITIZE)
CPPFLAGS = -include $(CONFIG_DIR)/config.h -I$(CONFIG_DIR) -I$(TOP)/include -I$(TOP)/runtime -I$(TOP)/filem \
    -I$(TOP)/crs-criu -I$(TOP)/snapc -I$(TOP)/test/fuzz $(shell pkg-config --cflags jansson nettle)
LDLIBS = $(shell pkg-config --libs jansson nettle hwloc) -lpthread

TARGETS = ctl param_file snapshot_commit snapshot_manifest rank_info rank_entry crs_meta pagemap

# The crmpi sources each target needs (status and logging for all of them).
common_src = runtime/status.c runtime/log.c
filem_src = filem/snapshot_json.c filem/snapshot_entry.c filem/snapshot_manifest.c \
    filem/snapshot_verify.c filem/snapshot_commit.c filem/snapshot_list.c \
    filem/snapshot_rank_info.c filem/filem_fs.c
ctl_src = runtime/ctl.c runtime/job_info.c snapc/snapc_base.c
param_file_src = runtime/param.c runtime/param_parse.c runtime/param_file.c \
    runtime/param_unknown.c
snapshot_commit_src = $(filem_src)
snapshot_manifest_src = $(filem_src)
rank_info_src = $(filem_src)
rank_entry_src = $(filem_src)
pagemap_src = crs-criu/crs_criu_flatten.c
crs_meta_src = crs-criu/crs_criu_meta.c crs-criu/crs_criu_numa.c runtime/mempolicy.c runtime/fs.c \
    runtime/fault.c \
    $(param_file_src)

all: $(addprefix fuzz_,$(TARGETS))

# The crmpi sources with coverage for the fuzzer, the targets' own files as well.
obj/%.o: $(TOP)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

define fuzz_target
fuzz_$(1): obj/test/fuzz/fuzz_$(1).o $$(patsubst %.c,obj/%.o,$$($(1)_src) $$(common_src))
	$$(CC) $$(CFLAGS) -fsanitize=fuzzer -o $$@ $$^ $$(LDLIBS)
endef
$(foreach target,$(TARGETS),$(eval $(call fuzz_target,$(target))))

-include $(shell find obj -name '*.d' 2>/dev/null)

.PHONY: all
