# iotrace build. `make` builds ./iotrace and ./workloads/*; `make V=1` shows full commands.
# Chain for the BPF side (libbpf-bootstrap style):
#   clang -target bpf → bpftool gen object (static link) → bpftool gen skeleton → user/*/*.c

# `make ARCH=arm64` cross-builds iotrace, the workloads and the bench helpers for arm64 into
# .output/arm64/ (binaries there too), with clang, Debian's binutils for aarch64 and a
# sysroot of Debian's arm64 packages (scripts/debian.py, fetched into .output/arm64/).
# ARCH is taken from the command line only (one in the environment names other things).
ARCH := x86
ifeq ($(ARCH),arm64)
OUTPUT := .output/arm64
BIN := $(OUTPUT)/
SYSROOT := $(OUTPUT)/sysroot
CROSS := --target=aarch64-linux-gnu --sysroot=$(SYSROOT)
CC := clang $(CROSS)
VMLINUX_H := vmlinux/arm64/vmlinux.h
# No arm64 kernel to cut a minimal BTF from: the loader relocates against the running one's.
VMLINUX_BTF := -
PKG_CONFIG := PKG_CONFIG_SYSROOT_DIR=$(SYSROOT) \
	PKG_CONFIG_LIBDIR=$(SYSROOT)/usr/lib/aarch64-linux-gnu/pkgconfig:$(SYSROOT)/usr/share/pkgconfig \
	pkg-config
else
OUTPUT := .output
BIN :=
PKG_CONFIG := pkg-config
endif
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= cc
PYTHON ?= /usr/bin/python3
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
VMLINUX_H ?= vmlinux/vmlinux.h

# git's name for this tree; without git (a tarball, a package build) debian/changelog's version.
VERSION := $(shell [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ] && \
	git describe --always --dirty 2>/dev/null || \
	awk 'NR == 1 { gsub(/[()]/, "", $$2); print $$2 }' debian/changelog 2>/dev/null)
VERSION := $(or $(VERSION),unknown)

CFLAGS ?= -O2 -g
# Warnings are errors in the default build and CI; `make WERROR=` for other compilers.
WERROR ?= -Werror
CFLAGS += -Wall -Wextra -Wno-unused-parameter $(WERROR) -std=gnu11 -MMD -MP
# clang (the cross-build's compiler) warns of { .a = 1 } leaving other fields zero; gcc not.
CFLAGS += $(if $(BIN),-Wno-missing-field-initializers)
# user/'s folders are its stages (docs/design.md); an include names the folder of another
# stage's header ("model/model.h") and finds it through -Iuser.
USER_CFLAGS := $(CPPFLAGS) $(CFLAGS) -D_GNU_SOURCE -I$(OUTPUT) -Ibpf -Iuser
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -I$(dir $(VMLINUX_H)) -Ibpf \
	-Wall -Wno-unused-function $(WERROR) -MMD -MP
LIBS = -lbpf -ldw -lelf -lz -lcjson -lseccomp -lm $(shell $(PKG_CONFIG) --libs ncursesw)

# The tracer's kernel programs: one file per concern, compiled as one unit (bpf/iotrace.bpf.c
# includes the others; -MMD tracks them).
TRACER_BPF_OBJS := $(OUTPUT)/bpf/iotrace.bpf.o
USER_STAGES := cmd collect kernel report model util
USER_SRCS := $(wildcard $(USER_STAGES:%=user/%/*.c))
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS)) $(OUTPUT)/user/kernel/min_btf.o
USER_OBJ_DIRS := $(USER_STAGES:%=$(OUTPUT)/user/%)
# Structs the programs pass to bpf_rdonly_cast: KERNEL_CAST_STRUCTS in bpf/iotrace.h.
# (continuation lines joined first).
KERNEL_CAST_TYPES := $(shell sed -e ':a' -e '/\\$$/N; s/\\\n//; ta' bpf/iotrace.h | \
	sed -n 's/^\#define KERNEL_CAST_STRUCTS(X) *//p' | sed 's/X(\([a-z_]*\))/\1/g')
KERNEL_NOTES ?= /sys/kernel/notes
WORKLOADS := $(patsubst %.c,$(BIN)%,$(wildcard workloads/*.c))
# Small C programs used by tests and benchmarks only (not shipped).
TEST_PROGS := $(OUTPUT)/tests/probe_test $(OUTPUT)/tests/kbtf_test $(OUTPUT)/tests/hist_test \
	$(OUTPUT)/tests/btf_args_test $(OUTPUT)/tests/container_test \
	$(OUTPUT)/tests/container_resolver_test $(OUTPUT)/tests/procs_test \
	$(OUTPUT)/tests/json_cells_test $(OUTPUT)/tests/json_text_test $(OUTPUT)/tests/masks_test
BENCH_PROGS := $(OUTPUT)/bench/floor $(OUTPUT)/bench/cmdtime
FUZZ_PROGS := $(OUTPUT)/fuzz/fuzz_parsers $(OUTPUT)/fuzz/fuzz_escape $(OUTPUT)/fuzz/fuzz_container

comma := ,
empty :=
space := $(empty) $(empty)

ifeq ($(V),1)
	Q =
	msg =
else
	Q = @
	msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.PHONY: FORCE all arm64 deps vmlinux workloads container-rootfs bench-containers test test-kernels \
	kernels-doc demo experiments bench bench-top \
	fuzz soak clean
.DELETE_ON_ERROR:
# Keep skeletons and linked objects: they are inputs of several targets.
.SECONDARY:

ifeq ($(ARCH),arm64)
all: $(BIN)iotrace workloads $(BENCH_PROGS)

$(OUTPUT)/.deps: scripts/debian.py scripts/deps.sh | $(OUTPUT)
	$(call msg,SYSROOT,$(SYSROOT))
	$(Q)scripts/deps.sh && $(PYTHON) scripts/debian.py sysroot arm64 > /dev/null && touch $@
else
all: iotrace man workloads $(TEST_PROGS) $(BENCH_PROGS) $(FUZZ_PROGS) container-rootfs


# Installs missing Debian packages (quick no-op when all are present).
$(OUTPUT)/.deps: scripts/deps.sh | $(OUTPUT)
	$(call msg,DEPS,scripts/deps.sh)
	$(Q)scripts/deps.sh && touch $@
endif

deps:
	$(Q)scripts/deps.sh

$(OUTPUT) $(OUTPUT)/bpf $(USER_OBJ_DIRS) $(OUTPUT)/tests $(OUTPUT)/bench:
	$(Q)mkdir -p $@

vmlinux:
	$(call msg,BTF,$(VMLINUX_BTF) → $(VMLINUX_H))
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $(VMLINUX_H).tmp
	$(Q)mv $(VMLINUX_H).tmp $(VMLINUX_H)

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(VMLINUX_H) $(OUTPUT)/.deps | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/iotrace.bpf.o: $(TRACER_BPF_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

# The same programs built for kernels without some kfuncs (bpf/maps.bpf.h): without the task
# VMA iterator (before 6.7), and without bpf_rdonly_cast either (6.1). Same maps, programs
# and globals: the loader opens the build this kernel can load with iotrace.skel.h.
# And for kernels without bpf_loop, atomic fetch operations or task BTF helpers (5.10-5.16:
# bpf/compat.bpf.h).
# And the full build once more with its kfuncs called by number (KFUNC_BY_ID), for the kernel
# it was built on: the loader gives their ids and the attach targets' from the minimal BTF,
# and libbpf parses no kernel BTF (user/kernel/by_id.c).
BPF_VARIANTS := iotrace_noiter iotrace_nokfunc iotrace_compat iotrace_byid
BPF_DEFS_noiter := -DHAVE_VMA_ITER=0
BPF_DEFS_byid := -DKFUNC_BY_ID=1
BPF_DEFS_nokfunc := -DHAVE_RDONLY_CAST=0 -DHAVE_VMA_ITER=0
BPF_DEFS_compat := -DHAVE_RDONLY_CAST=0 -DHAVE_VMA_ITER=0 -DHAVE_COMPAT=1
$(BPF_VARIANTS:%=$(OUTPUT)/bpf/%.bpf.o): $(OUTPUT)/bpf/iotrace_%.bpf.o: bpf/iotrace.bpf.c \
		$(VMLINUX_H) $(OUTPUT)/.deps | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(BPF_DEFS_$*) -c $< -o $@

$(BPF_VARIANTS:%=$(OUTPUT)/%.bpf.o): $(OUTPUT)/%.bpf.o: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

# Single-file objects (probe, floor) are linked too, so every skeleton sees a final object.
$(OUTPUT)/probe.bpf.o $(OUTPUT)/floor.bpf.o: $(OUTPUT)/%.bpf.o: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

# The kernel BTF cut down to what the programs relocate against, with the identity of the
# kernel it was cut from (scripts/min_btf.py; the loader checks it: user/kernel/kbtf.c). Remade
# when the objects change or the build runs on another kernel.
KERNEL_ID := $(shell sha1sum $(KERNEL_NOTES) 2>/dev/null | cut -c1-40)
$(OUTPUT)/kernel.id: FORCE | $(OUTPUT)
	$(Q)echo '$(KERNEL_ID)' | cmp -s - $@ || echo '$(KERNEL_ID)' > $@

# The version the binary prints (--version, Prometheus' build info, a trace's metadata), in a
# header rewritten only when git's name for the tree changes: the objects that print it are
# then rebuilt, and only they (a -D on their command line was not: they kept the name of the
# tree they were first built from).
VERSION_USERS := $(addprefix $(OUTPUT)/user/,cmd/main.o report/prom.o report/trace_out.o)
$(OUTPUT)/version.h: FORCE | $(OUTPUT)
	$(Q)echo '#define IOTRACE_VERSION "$(VERSION)"' | cmp -s - $@ || \
		echo '#define IOTRACE_VERSION "$(VERSION)"' > $@
$(VERSION_USERS): $(OUTPUT)/version.h

MIN_BTF_OBJS := $(OUTPUT)/iotrace.bpf.o $(BPF_VARIANTS:%=$(OUTPUT)/%.bpf.o)
$(OUTPUT)/min_btf.c: $(MIN_BTF_OBJS) $(OUTPUT)/kernel.id scripts/min_btf.py
	$(call msg,MINBTF,$@)
	$(Q)BPFTOOL=$(BPFTOOL) $(PYTHON) scripts/min_btf.py $(VMLINUX_BTF) $(KERNEL_NOTES) \
		$(subst $(space),$(comma),$(strip $(MIN_BTF_OBJS))) $@ $(KERNEL_CAST_TYPES)

$(OUTPUT)/user/kernel/min_btf.o: $(OUTPUT)/min_btf.c user/kernel/kbtf.h | $(OUTPUT)/user/kernel
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -c $< -o $@

# Every user object may include the skeletons; -MMD tracks the rest.
$(OUTPUT)/user/%.o: user/%.c $(OUTPUT)/iotrace.skel.h $(BPF_VARIANTS:%=$(OUTPUT)/%.skel.h) | \
		$(USER_OBJ_DIRS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -c $< -o $@

$(BIN)iotrace: $(USER_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LIBS) -o $@

# Unit tests of user/ code, linked with its objects: each source has its own -MMD file (one
# compile of several sources writes only the last one's dependencies, naming that source).
$(OUTPUT)/tests/kbtf_test: tests/c/kbtf_test.c $(OUTPUT)/user/kernel/kbtf.o \
		$(OUTPUT)/user/util/util.o | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< $(filter %.o,$^) -o $@

$(OUTPUT)/tests/btf_args_test: tests/c/btf_args_test.c $(OUTPUT)/user/kernel/btf_args.o | \
		$(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< $(filter %.o,$^) -lbpf -o $@

$(OUTPUT)/tests/procs_test: tests/c/procs_test.c $(OUTPUT)/user/collect/procs.o \
		$(OUTPUT)/user/collect/follow.o $(OUTPUT)/user/util/vec.o | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< $(filter %.o,$^) -o $@

$(OUTPUT)/tests/json_cells_test: tests/c/json_cells_test.c $(OUTPUT)/user/report/json_cells.o \
		$(OUTPUT)/user/report/json_text.o $(OUTPUT)/user/util/vec.o \
		$(OUTPUT)/user/util/escape.o $(OUTPUT)/user/util/container_path.o \
		$(OUTPUT)/user/model/hist.o | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< $(filter %.o,$^) -lcjson -lm -o $@

$(OUTPUT)/tests/json_text_test: tests/c/json_text_test.c $(OUTPUT)/user/report/json_text.o \
		$(OUTPUT)/user/util/vec.o | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< $(filter %.o,$^) -lcjson -lm -o $@

$(OUTPUT)/tests/hist_test: tests/c/hist_test.c $(OUTPUT)/user/model/hist.o | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< $(filter %.o,$^) -o $@

$(OUTPUT)/tests/masks_test: tests/c/masks_test.c bpf/masks.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< -o $@

$(OUTPUT)/tests/container_test: tests/c/container_test.c $(OUTPUT)/user/util/container_path.o | \
		$(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< $(filter %.o,$^) -o $@

CONTAINER_OBJS := $(addprefix $(OUTPUT)/user/util/,container.o container_rt.o container_path.o \
	cgroup.o vec.o)
$(OUTPUT)/tests/container_resolver_test: tests/c/container_resolver_test.c $(CONTAINER_OBJS) | \
		$(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< $(filter %.o,$^) -lcjson -lpthread -o $@

# The dependency files of a tree built before user/ had folders name these sources of the
# unit tests' compiles at their old paths: gone, they only make the tests build again.
user/hist.c user/util.c:

$(OUTPUT)/tests/%: tests/c/%.c $(OUTPUT)/probe.skel.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< $(LIBS) -o $@

$(OUTPUT)/bench/cmdtime: bench/cmdtime.c $(OUTPUT)/.deps | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@

$(OUTPUT)/bench/%: bench/%.c $(OUTPUT)/%.skel.h | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $< $(LIBS) -o $@

# Lab note 003's Go workload (standard library only), built only where Go is found: a
# missing toolchain skips it. Its own build cache, so that no home directory is needed.
GO ?= $(shell command -v go 2>/dev/null || command -v /usr/local/go/bin/go 2>/dev/null)
GO_WORKLOADS := $(if $(GO),workloads/readall-go)

workloads: $(WORKLOADS) $(BIN)workloads/callsites-fp $(if $(BIN),,$(GO_WORKLOADS))

workloads/readall-go: workloads/readall-go.go | $(OUTPUT)
	$(call msg,GO,$@)
	$(Q)GOTOOLCHAIN=local GOCACHE=$(abspath $(OUTPUT))/go-cache $(GO) build -o $@ $<

$(BIN)workloads/%: workloads/%.c $(OUTPUT)/.deps
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MF $(OUTPUT)/$(subst /,_,$@).d $< -o $@ $(WORKLOAD_LIBS_$(@F))

# The io_uring workload links liburing (Debian's liburing-dev).
WORKLOAD_LIBS_uring := -luring
WORKLOAD_LIBS_paced := -luring
WORKLOAD_LIBS_storm := -pthread
# --stacks' workload, without frame pointers (as Debian builds) and with them.
WORKLOAD_LIBS_callsites := -fomit-frame-pointer

$(BIN)workloads/callsites-fp: workloads/callsites.c $(OUTPUT)/.deps
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-MF $(OUTPUT)/$(subst /,_,$@).d $< -o $@

# The container tests' image (tests/containers.py imports it with podman, no registry): a
# root file system of busybox-static and the workloads linked -static, as a tarball.
STATIC_WORKLOADS := $(patsubst workloads/%.c,$(OUTPUT)/static/%,$(wildcard workloads/*.c))
CONTAINER_ROOTFS := $(OUTPUT)/container-rootfs.tar

container-rootfs: $(CONTAINER_ROOTFS)

$(OUTPUT)/static/%: workloads/%.c $(OUTPUT)/.deps
	$(Q)mkdir -p $(@D)
	$(call msg,STATIC,$@)
	$(Q)$(CC) $(CFLAGS) -static -MF $(OUTPUT)/static/$*.d $< -o $@ $(WORKLOAD_LIBS_$*)

$(CONTAINER_ROOTFS): $(STATIC_WORKLOADS) scripts/container_rootfs.sh
	$(call msg,ROOTFS,$@)
	$(Q)scripts/container_rootfs.sh $@ $(STATIC_WORKLOADS)

# The README's two commands.
demo: deps all
	$(Q)scripts/demo.sh

# The kernel matrix boots arm64 guests too: their build first.
arm64:
	$(Q)$(MAKE) --no-print-directory ARCH=arm64

test: deps all arm64
	$(Q)scripts/test.sh

# Only the kernel matrix (tests/test_kernels.py): Debian's 6.1 kernels booted under QEMU;
# `make kernels-doc` then writes docs/kernels.md from its results and the host's.
test-kernels: deps all arm64
	$(Q)scripts/test.sh tests/test_kernels.py

kernels-doc: all
	$(Q)$(PYTHON) scripts/kernels_doc.py

# libFuzzer targets (tests/fuzz/): the command-line value parsers, and the escaping of names
# with the text cells that cut them; `make fuzz` runs each for FUZZ_SECONDS.
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-D_GNU_SOURCE -Iuser -Iworkloads
$(OUTPUT)/fuzz/fuzz_parsers: tests/fuzz/fuzz_parsers.c user/util/util.c user/util/util.h \
		workloads/sizearg.h $(OUTPUT)/.deps
	$(Q)mkdir -p $(@D)
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) tests/fuzz/fuzz_parsers.c user/util/util.c -o $@ -lm

ESCAPE_FUZZ_SRCS := tests/fuzz/fuzz_escape.c user/util/escape.c user/report/cells.c \
	user/report/json_text.c user/util/vec.c
$(OUTPUT)/fuzz/fuzz_escape: $(ESCAPE_FUZZ_SRCS) user/util/escape.h user/report/cells.h \
		user/report/json_text.h user/util/vec.h \
		$(OUTPUT)/.deps
	$(Q)mkdir -p $(@D)
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(ESCAPE_FUZZ_SRCS) -o $@ -lcjson -lm

# The cgroup path parser (which container a path is), checked against its own invariants.
CONTAINER_FUZZ_SRCS := tests/fuzz/fuzz_container.c user/util/container_path.c
$(OUTPUT)/fuzz/fuzz_container: $(CONTAINER_FUZZ_SRCS) user/util/container_path.h $(OUTPUT)/.deps
	$(Q)mkdir -p $(@D)
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(CONTAINER_FUZZ_SRCS) -o $@

fuzz: deps $(FUZZ_PROGS)
	$(Q)mkdir -p $(OUTPUT)/fuzz/corpus $(OUTPUT)/fuzz/corpus-escape $(OUTPUT)/fuzz/corpus-container
	$(Q)head -c 64 $(KERNEL_NOTES) > $(OUTPUT)/fuzz/corpus/kernel-notes 2>/dev/null || true
	$(Q)$(OUTPUT)/fuzz/fuzz_parsers -max_total_time=$(FUZZ_SECONDS) -max_len=64 \
		$(OUTPUT)/fuzz/corpus tests/fuzz/seeds
	$(Q)$(OUTPUT)/fuzz/fuzz_escape -max_total_time=$(FUZZ_SECONDS) -max_len=256 \
		$(OUTPUT)/fuzz/corpus-escape tests/fuzz/escape-seeds
	$(Q)$(OUTPUT)/fuzz/fuzz_container -max_total_time=$(FUZZ_SECONDS) -max_len=512 \
		$(OUTPUT)/fuzz/corpus-container tests/fuzz/container-seeds

# Long hardening runs (minutes; SOAK_SECONDS=600 by default): not part of `make test`. Their
# own --basetemp, so that pytest runs meanwhile do not clean up their files.
SOAK_SECONDS ?= 600
soak: deps all
	$(Q)SOAK_SECONDS=$(SOAK_SECONDS) $(PYTHON) -m pytest -p no:cacheprovider -ra -m soak \
		--basetemp=$(OUTPUT)/soak-tmp tests

# Overhead against strace, perf trace, bpftrace and the floor → docs/performance.* (minutes).
bench: deps all
	$(Q)$(PYTHON) scripts/bench.py

# The container filter's cost (docs/containers.md): bpf_stats beside BASELINE=<an earlier
# iotrace> when given; needs podman.
bench-containers: all
	$(Q)$(PYTHON) scripts/bench_containers.py $(if $(BASELINE),--baseline $(BASELINE))

# iotrace top's cost on tr2u beside run mode's, and its CPU per refresh (docs/top.md).
bench-top: all
	$(Q)$(PYTHON) scripts/bench_top.py

# The lab notes reproduced under their own conditions into docs/experiments/ (about 7
# minutes; needs root: makes loop devices and mounts, and undoes them).
experiments: deps all
	$(Q)$(PYTHON) scripts/experiments.py

# ---- install, man page, Debian package (docs/install.md) ----
# bcc libbpf-tools' conventions: PREFIX (default /usr/local) and DESTDIR.
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/iotrace
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
INSTALL ?= install
SCDOC ?= scdoc
DOC_FILES := README.md $(sort $(wildcard docs/*.md docs/*.png)) docs/grafana-iotrace.json
# Every file `make install` writes (below $(DESTDIR)) and `make uninstall` removes.
INSTALLED := $(SBINDIR)/iotrace $(MANDIR)/man8/iotrace.8 $(BASHCOMPDIR)/iotrace \
	$(SYSTEMDUNITDIR)/iotrace-serve.service $(addprefix $(DOCDIR)/,$(DOC_FILES))

.PHONY: man install uninstall deb

man: $(OUTPUT)/iotrace.8

$(OUTPUT)/iotrace.8: man/iotrace.8.scd | $(OUTPUT)
	$(call msg,SCDOC,$@)
	$(Q)$(SCDOC) < $< > $@

# ExecStart names the installed binary: made for this SBINDIR at every install.
$(OUTPUT)/iotrace-serve.service: systemd/iotrace-serve.service.in FORCE | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)sed 's|@SBINDIR@|$(SBINDIR)|g' $< > $@

# $(call install_file,MODE,SOURCE,DESTINATION)
define install_file
	$(call msg,INSTALL,$(DESTDIR)$(3))
	$(Q)$(INSTALL) -D -m $(1) $(2) $(DESTDIR)$(3)

endef

install: iotrace $(OUTPUT)/iotrace.8 $(OUTPUT)/iotrace-serve.service
	$(call install_file,0755,iotrace,$(SBINDIR)/iotrace)
	$(call install_file,0644,$(OUTPUT)/iotrace.8,$(MANDIR)/man8/iotrace.8)
	$(call install_file,0644,completion/iotrace.bash,$(BASHCOMPDIR)/iotrace)
	$(call install_file,0644,$(OUTPUT)/iotrace-serve.service,$(SYSTEMDUNITDIR)/iotrace-serve.service)
	$(foreach f,$(DOC_FILES),$(call install_file,0644,$(f),$(DOCDIR)/$(f)))

define uninstall_file
	$(call msg,RM,$(DESTDIR)$(1))
	$(Q)rm -f $(DESTDIR)$(1)

endef

uninstall:
	$(foreach f,$(INSTALLED),$(call uninstall_file,$(f)))
	$(Q)rmdir --ignore-fail-on-non-empty $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR) 2>/dev/null || true

# A binary package built out of tree, in $(OUTPUT)/deb (dpkg writes next to the source
# directory), from the files git knows (tracked, or new and not ignored); then lintian.
# V=1 shows the package build's output.
DEB_VERSION = $(shell dpkg-parsechangelog -S Version)
DEB_SRC = $(OUTPUT)/deb/iotrace-$(DEB_VERSION)
DEB_LOG = $(if $(Q),> ../build.log 2>&1 || { tail -n 40 ../build.log; exit 1; })

deb:
	$(call msg,DEB,$(OUTPUT)/deb/iotrace_$(DEB_VERSION)_amd64.deb)
	$(Q)rm -rf $(OUTPUT)/deb && mkdir -p $(DEB_SRC)
	$(Q)git ls-files -z --cached --others --exclude-standard | xargs -0 cp -P --parents -t $(DEB_SRC)
	$(Q)cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b -jauto $(DEB_LOG)
	$(call msg,LINTIAN,$(OUTPUT)/deb/iotrace_$(DEB_VERSION)_amd64.deb)
	$(Q)lintian --fail-on error $(OUTPUT)/deb/iotrace_$(DEB_VERSION)_amd64.deb

clean:
	$(call msg,CLEAN,)
	$(Q)rm -rf $(OUTPUT) iotrace $(WORKLOADS) workloads/readall-go

-include $(wildcard $(OUTPUT)/*/*.d $(OUTPUT)/*.d $(USER_OBJ_DIRS:%=%/*.d))
