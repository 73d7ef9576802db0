# SPDX-License-Identifier: GPL-2.0
#
# d3dq: the single entry point. "make help" lists the targets.
#
# Everything generated lands in build/. Kernels are named by their line
# (6.1, 6.12, 7.3, 7.2), listed in scripts/kernels.pin; KERNELS (default:
# every line there) narrows, e.g. KERNELS=6.1 or KERNELS="6.1 7.3".

VERSION := 0.5.0
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
# The DKMS source tree and the module configuration (make install-dkms).
DKMSDIR ?= /usr/src
MODPROBEDIR ?= /lib/modprobe.d
MODULESLOADDIR ?= /usr/lib/modules-load.d
DESTDIR ?=
# Where the installed tools find libd3dq: the build tree's lib/ by default;
# debian/rules sets it empty (the library is in the linker's path there).
TOOL_RPATH ?= $$ORIGIN/../lib

KERNELS ?=
export KERNELS
# The kernel "make run" and "make shell" boot (a test line).
RUN_KERNEL ?= 6.12

B ?= build
CC ?= cc
CXX ?= c++
PKG_CONFIG ?= pkg-config

.DEFAULT_GOAL := all
.SUFFIXES:
.DELETE_ON_ERROR:

# Goals that build or install userspace and packages only: they work
# offline and unprivileged (no apt, no kernel names, no tests), which is
# what debian/rules and a distribution build need. kernels-newer needs
# neither the packages nor the kernel names either.
OFFLINE_GOALS := clean help lib tools install install-lib install-tools \
	install-dkms deb check-packages kernels-newer
ifneq ($(filter-out $(OFFLINE_GOALS),$(or $(MAKECMDGOALS),all)),)
ifeq ($(D3DQ_NO_DEPS),)
DEPS_RC := $(shell scripts/deps >&2; echo $$?)
ifneq ($(DEPS_RC),0)
$(error scripts/deps failed)
endif
endif
# "6.1 <abi> 6.12 <abi> ..." -> the ABIs.
# ($(shell) does not see command-line variables: pass KERNELS on.)
KPAIRS := $(shell KERNELS='$(KERNELS)' scripts/kernels)
ifeq ($(KPAIRS),)
$(error scripts/kernels could not resolve KERNELS="$(KERNELS)")
endif
ABIS := $(foreach i,$(shell seq 2 2 $(words $(KPAIRS))),$(word $(i),$(KPAIRS)))
endif
ifneq ($(filter-out clean help deb check-packages,$(or $(MAKECMDGOALS),all)),)
DRM_CFLAGS := $(shell $(PKG_CONFIG) --cflags libdrm)
DRM_LIBS := $(shell $(PKG_CONFIG) --libs libdrm)
# Microsoft's headers (directx-headers-dev), for the D3D12 layer and its tests.
DX_CFLAGS := $(shell $(PKG_CONFIG) --cflags DirectX-Headers)
DX_LIBS := $(shell $(PKG_CONFIG) --libs DirectX-Headers)
endif

# include/d3dq/d3dq.h declares the same version (d3dq_version(3)).
HEADER_VERSION := $(shell sed -n 's/^\#define D3DQ_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9][0-9]*\)$$/\2/p' \
	include/d3dq/d3dq.h | paste -sd.)
ifneq ($(HEADER_VERSION),$(VERSION))
$(error VERSION is $(VERSION) but include/d3dq/d3dq.h says $(HEADER_VERSION): update both)
endif

WARN := -Wall -Wextra -Werror
COMMON_CFLAGS := $(WARN) -O2 -g -pthread -MMD -MP \
	-Iinclude -Iinclude/uapi/drm $(DRM_CFLAGS)

# --- kernel module -----------------------------------------------------------

.PHONY: modules
modules:
	@for abi in $(ABIS); do scripts/build-module $$abi || exit 1; done

# --- libraries ---------------------------------------------------------------

# Each shared library is described by a few variables and instantiated by
# lib_rules; "make lib" builds and "make install-lib" installs them all.
# For library NAME (built as libNAME.so.$(lib_NAME_soversion)):
#   lib_NAME_srcs        C sources (one directory, no recursion)
#   lib_NAME_map         version script: the export list
#   lib_NAME_pc          pkg-config template (@PREFIX@, @LIBDIR@, ...)
#   lib_NAME_headers     headers installed to $(INCLUDEDIR)/lib_NAME_incdir
#   lib_NAME_man         man pages, section 3
#   lib_NAME_cflags      added to the compiler flags of its sources
#   lib_NAME_libs        what it links against
#   lib_NAME_deps        build-tree files it needs first (another library)
# A library without headers of its own leaves headers and incdir empty.
# A library carries no run path (Debian forbids one in an installed
# library): the programs that use build/lib find it through their own.
LIBRARIES := d3dq d3d12-d3dq

lib_d3dq_soversion := 0
lib_d3dq_srcs := $(wildcard libd3dq/*.c)
lib_d3dq_map := libd3dq/libd3dq.map
lib_d3dq_pc := libd3dq/libd3dq.pc.in
# The uapi header is installed next to d3dq.h as <d3dq/d3dq_drm.h>.
lib_d3dq_headers := include/d3dq/d3dq.h include/uapi/drm/d3dq_drm.h
lib_d3dq_incdir := d3dq
lib_d3dq_man := $(wildcard libd3dq/man/*.3)
lib_d3dq_cflags :=
lib_d3dq_libs = $(DRM_LIBS)
lib_d3dq_deps :=

# libd3d12-d3dq: ID3D12Device and friends on libd3dq's public API. Its
# headers are Microsoft's (directx-headers-dev, pkg-config DirectX-Headers),
# and d3d12_d3dq.h for what D3D12 lacks.
# The COM methods ignore many of their arguments: -Wno-unused-parameter.
lib_d3d12-d3dq_soversion := 0
lib_d3d12-d3dq_srcs := $(wildcard libd3dq/d3d12/*.c)
lib_d3d12-d3dq_map := libd3dq/d3d12/libd3d12-d3dq.map
lib_d3d12-d3dq_pc := libd3dq/d3d12/libd3d12-d3dq.pc.in
# Its own header: d3d12_d3dq_create_device(), devices with a callback.
lib_d3d12-d3dq_headers := include/d3dq/d3d12_d3dq.h
lib_d3d12-d3dq_incdir := d3dq
lib_d3d12-d3dq_man := $(wildcard libd3dq/d3d12/man/*.3)
lib_d3d12-d3dq_cflags = $(DX_CFLAGS) -Wno-unused-parameter
lib_d3d12-d3dq_libs = -L$(B)/lib -ld3dq $(DX_LIBS)
# Linking against it needs libd3dq.so.N too (its NEEDED entry).
lib_d3d12-d3dq_deps := $(B)/lib/libd3dq.so $(B)/lib/libd3dq.so.$(lib_d3dq_soversion)

LIB_CFLAGS := -std=c11 -fPIC -fvisibility=hidden $(COMMON_CFLAGS)
comma := ,

# $(call lib_rules,NAME)
define lib_rules
lib_$(1)_objs := $$(lib_$(1)_srcs:%.c=$(B)/obj/%.o)
$$(lib_$(1)_objs): lib_cflags = $$(lib_$(1)_cflags)
lib_$(1)_so := $(B)/lib/lib$(1).so.$(VERSION)
LIB_TARGETS += $$(lib_$(1)_so) $(B)/lib/lib$(1).so.$$(lib_$(1)_soversion) \
	$(B)/lib/lib$(1).so $(B)/lib/lib$(1).a $(B)/lib/pkgconfig/lib$(1).pc

$$(lib_$(1)_so): $$(lib_$(1)_objs) $$(lib_$(1)_map) $$(lib_$(1)_deps)
	@mkdir -p $$(@D)
	$$(CC) -shared -pthread -Wl,-soname,lib$(1).so.$$(lib_$(1)_soversion) \
		-Wl,--no-undefined -Wl,--version-script=$$(lib_$(1)_map) $$(LDFLAGS) \
		-o $$@ $$(lib_$(1)_objs) $$(lib_$(1)_libs)

$(B)/lib/lib$(1).so.$$(lib_$(1)_soversion) $(B)/lib/lib$(1).so: $$(lib_$(1)_so)
	ln -sfn $$(notdir $$<) $$@

$(B)/lib/lib$(1).a: $$(lib_$(1)_objs)
	@mkdir -p $$(@D)
	rm -f $$@
	$$(AR) rcs $$@ $$^

$(B)/lib/pkgconfig/lib$(1).pc: $$(lib_$(1)_pc) Makefile
	@mkdir -p $$(@D)
	$$(call pc_subst,$$(PREFIX),$$(LIBDIR),$$(INCLUDEDIR)) $$< >$$@

.PHONY: install-lib-$(1)
install-lib-$(1): $$(lib_$(1)_so) $(B)/lib/lib$(1).a
	install -d $$(DESTDIR)$$(LIBDIR)/pkgconfig $$(DESTDIR)$$(MANDIR)/man3
	$$(if $$(lib_$(1)_headers),install -d $$(DESTDIR)$$(INCLUDEDIR)/$$(lib_$(1)_incdir))
	$$(if $$(lib_$(1)_headers),install -m 644 $$(lib_$(1)_headers) \
		$$(DESTDIR)$$(INCLUDEDIR)/$$(lib_$(1)_incdir)/)
	install -m 644 $$(lib_$(1)_so) $$(DESTDIR)$$(LIBDIR)/
	ln -sfn $$(notdir $$(lib_$(1)_so)) $$(DESTDIR)$$(LIBDIR)/lib$(1).so.$$(lib_$(1)_soversion)
	ln -sfn lib$(1).so.$$(lib_$(1)_soversion) $$(DESTDIR)$$(LIBDIR)/lib$(1).so
	install -m 644 $(B)/lib/lib$(1).a $$(DESTDIR)$$(LIBDIR)/
	$$(call pc_subst,$$(PREFIX),$$(LIBDIR),$$(INCLUDEDIR)) $$(lib_$(1)_pc) \
		>$$(DESTDIR)$$(LIBDIR)/pkgconfig/lib$(1).pc
	$$(if $$(lib_$(1)_man),install -m 644 $$(lib_$(1)_man) $$(DESTDIR)$$(MANDIR)/man3/)
endef

$(B)/obj/%.o: %.c Makefile
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) $(lib_cflags) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# pkg-config file for a given prefix: $(call pc_subst,prefix,libdir,includedir)
pc_subst = sed -e 's|@PREFIX@|$(1)|g' -e 's|@EXEC_PREFIX@|$(1)|g' \
	-e 's|@LIBDIR@|$(2)|g' -e 's|@INCLUDEDIR@|$(3)|g' -e 's|@VERSION@|$(VERSION)|g'

$(foreach l,$(LIBRARIES),$(eval $(call lib_rules,$(l))))

.PHONY: lib install-lib
lib: $(LIB_TARGETS)
install-lib: $(addprefix install-lib-,$(LIBRARIES))

# --- tests -------------------------------------------------------------------

# Every tests/<suite>/*.c and *.cpp is one program; tests/<suite>/util/*.c
# is linked into each C program of the suite.
SUITES := $(patsubst tests/%/,%,$(sort $(dir $(wildcard tests/*/*.c tests/*/*.cpp))))
KSELFTEST := $(B)/kselftest/kselftest_harness.h
# The kselftest harness's macros trip these warnings in correct tests:
# unused _metadata/variant parameters, int literals compared with unsigned
# values in EXPECT_EQ, vfork in fixtures, and the handler loop that ends
# every ASSERT/EXPECT when a block follows it.
TEST_CFLAGS := -std=gnu11 $(COMMON_CFLAGS) -Wno-unused-parameter -Wno-sign-compare \
	-Wno-clobbered -Wno-misleading-indentation -I$(B)/kselftest -Itests

$(KSELFTEST):
	scripts/fetch-tools

suite_libs_kernel := $(DRM_LIBS) -lpthread
suite_libs_lib := -L$(B)/lib -Wl,-rpath,'$$ORIGIN/../../lib' -ld3dq $(DRM_LIBS) -lpthread
suite_deps_lib := $(B)/lib/libd3dq.so
# The robustness suites use the kernel tests' helpers (and libd3dq).
suite_util_fuzz := $(wildcard tests/kernel/util/*.c)
suite_libs_fuzz := $(DRM_LIBS) -lpthread
suite_cflags_fuzz := -Itests/kernel
suite_util_stress := $(wildcard tests/kernel/util/*.c)
suite_cflags_stress := -Itests/kernel
suite_deps_stress := $(B)/lib/libd3dq.so
# The reference model's checker (Documentation/library.rst).
suite_deps_model := $(B)/lib/libd3dq.so
# The D3D12 suite: d3d12.h and libd3d12-d3dq only (plus the kernel tests'
# helpers to reload the module). libd3d12-d3dq has no run path, so the
# programs carry an old-style DT_RPATH, which (unlike DT_RUNPATH) also
# finds libd3dq.so.0 for it. C++ programs (*.cpp) print their own TAP.
# GCC 12 cannot silence -Wunknown-pragmas with a pragma in C++ (bug 53431,
# fixed in 13), so C++ gets the command-line flag; C uses the pragma.
suite_util_d3d12 := $(wildcard tests/kernel/util/*.c)
suite_cflags_d3d12 := -Itests/kernel $(DX_CFLAGS)
suite_libs_d3d12 := -L$(B)/lib -Wl,-rpath-link,$(B)/lib \
	-Wl,--disable-new-dtags,-rpath,'$$ORIGIN/../../lib' -ld3d12-d3dq $(DX_LIBS) $(DRM_LIBS) -lpthread
suite_deps_d3d12 := $(B)/lib/libd3d12-d3dq.so $(B)/tools/d3d12-hello
TEST_CXXFLAGS := -std=c++17 $(WARN) -Wno-unknown-pragmas -O2 -g -pthread -MMD -MP

define suite_rules
$(1)_PROGS := $$(patsubst tests/$(1)/%.c,$(B)/tests/$(1)/%,$$(wildcard tests/$(1)/*.c))
$(1)_CXXPROGS := $$(patsubst tests/$(1)/%.cpp,$(B)/tests/$(1)/%,$$(wildcard tests/$(1)/*.cpp))
$(1)_UTIL := $$(wildcard tests/$(1)/util/*.c) $$(suite_util_$(1))
TEST_PROGS += $$($(1)_PROGS) $$($(1)_CXXPROGS)
$$($(1)_PROGS): $(B)/tests/$(1)/%: tests/$(1)/%.c $$($(1)_UTIL) $$(suite_deps_$(1)) Makefile | $(KSELFTEST)
	@mkdir -p $$(@D); rm -f $$@
	$$(CC) $$(TEST_CFLAGS) -Itests/$(1) $$(suite_cflags_$(1)) $$(CFLAGS) $$(LDFLAGS) -o $$@ \
		$$< $$($(1)_UTIL) $$(or $$(suite_libs_$(1)),$$(suite_libs_lib))
$$($(1)_CXXPROGS): $(B)/tests/$(1)/%: tests/$(1)/%.cpp $$(suite_deps_$(1)) Makefile
	@mkdir -p $$(@D); rm -f $$@
	$$(CXX) $$(TEST_CXXFLAGS) -Itests/$(1) $$(suite_cflags_$(1)) $$(CXXFLAGS) $$(LDFLAGS) -o $$@ \
		$$< $$(or $$(suite_libs_$(1)),$$(suite_libs_lib))
endef
$(foreach s,$(SUITES),$(eval $(call suite_rules,$(s))))

.PHONY: tests
tests: $(TEST_PROGS)

# --- ThreadSanitizer build ---------------------------------------------------

# The library and tests/lib built with -fsanitize=thread in build/tsan/,
# for "make check-tsan" (not part of "make check"); without the two
# programs that test files and tools rather than threads.
TSAN := $(B)/tsan
TSAN_FLAGS := -fsanitize=thread -O1
TSAN_LIB_OBJS := $(lib_d3dq_srcs:%.c=$(TSAN)/obj/%.o)
TSAN_LIB := $(TSAN)/lib/libd3dq.so
TSAN_TESTS := $(filter-out %/symbols %/bench_smoke,\
	$(patsubst tests/lib/%.c,$(TSAN)/tests/lib/%,$(wildcard tests/lib/*.c)))

$(TSAN)/obj/libd3dq/%.o: libd3dq/%.c Makefile
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) $(TSAN_FLAGS) $(CFLAGS) -c -o $@ $<

$(TSAN_LIB): $(TSAN_LIB_OBJS) $(lib_d3dq_map)
	@mkdir -p $(@D)
	$(CC) -shared -pthread $(TSAN_FLAGS) -Wl,-soname,libd3dq.so.$(lib_d3dq_soversion) \
		-Wl,--version-script=$(lib_d3dq_map) $(LDFLAGS) \
		-o $(TSAN)/lib/libd3dq.so.$(lib_d3dq_soversion) $(TSAN_LIB_OBJS) $(DRM_LIBS)
	ln -sfn libd3dq.so.$(lib_d3dq_soversion) $@

$(TSAN)/tests/lib/%: tests/lib/%.c $(lib_UTIL) $(TSAN_LIB) Makefile | $(KSELFTEST)
	@mkdir -p $(@D); rm -f $@
	$(CC) $(TEST_CFLAGS) $(TSAN_FLAGS) -Itests/lib $(CFLAGS) $(LDFLAGS) -o $@ \
		$< $(lib_UTIL) -L$(TSAN)/lib -Wl,-rpath,'$$ORIGIN/../../lib' -ld3dq \
		$(DRM_LIBS) -lpthread

.PHONY: tsan
tsan: $(TSAN_TESTS)

# --- tools -------------------------------------------------------------------

# A tool is tools/NAME.c, or a directory tools/NAME/ whose *.c are linked
# together (with its *.h as prerequisites); either way build/tools/NAME.
# A tool with a source that includes d3dq/d3dq.h links libd3dq; the others
# only libdrm.
TOOL_DIRS := $(sort $(patsubst tools/%/,%,$(dir $(wildcard tools/*/*.c))))
TOOL_PROGS := $(patsubst tools/%.c,$(B)/tools/%,$(wildcard tools/*.c)) \
	$(addprefix $(B)/tools/,$(TOOL_DIRS))
TOOLS_WITH_LIB := $(sort $(foreach f,\
	$(shell grep -l 'include.*d3dq/d3dq\.h' tools/*.c tools/*/*.[ch] 2>/dev/null),\
	$(B)/tools/$(firstword $(subst /, ,$(patsubst tools/%,%,$(basename $(f)))))))
TOOL_LIBD3DQ := -L$(B)/lib $(if $(TOOL_RPATH),-Wl$(comma)-rpath$(comma)'$(TOOL_RPATH)') -ld3dq
TOOL_MAN := $(wildcard tools/man/*.1)

$(TOOLS_WITH_LIB): $(B)/lib/libd3dq.so $(B)/lib/libd3dq.so.0
$(TOOLS_WITH_LIB): TOOL_LIBS = $(TOOL_LIBD3DQ)

$(B)/tools/%: tools/%.c $(wildcard tools/util/*.h) Makefile
	@mkdir -p $(@D)
	$(CC) -std=c11 $(COMMON_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< \
		$(TOOL_LIBS) $(DRM_LIBS) -lpthread

# $(call tool_dir_rules,NAME): build/tools/NAME from tools/NAME/*.c
define tool_dir_rules
$(B)/tools/$(1): $(wildcard tools/$(1)/*.c) $(wildcard tools/$(1)/*.h) Makefile
	@mkdir -p $$(@D)
	$$(CC) -std=c11 $$(filter-out -MMD -MP,$$(COMMON_CFLAGS)) -Itools/$(1) \
		$$(CPPFLAGS) $$(CFLAGS) $$(LDFLAGS) -o $$@ \
		$$(filter %.c,$$^) $$(TOOL_LIBS) $$(DRM_LIBS) -lpthread
endef
$(foreach t,$(TOOL_DIRS),$(eval $(call tool_dir_rules,$(t))))

# C++ tools are D3D12 samples: d3d12.h and libd3d12-d3dq (GCC 12 needs
# -Wno-unknown-pragmas for d3d12.h in C++, see the D3D12 suite). With a
# TOOL_RPATH, an old-style DT_RPATH: it finds libd3dq.so.0 for the library
# (the linker finds it through -rpath-link).
TOOL_CXXPROGS := $(patsubst tools/%.cpp,$(B)/tools/%,$(wildcard tools/*.cpp))
TOOL_PROGS += $(TOOL_CXXPROGS)
TOOL_LIBD3D12 := -L$(B)/lib -Wl$(comma)-rpath-link$(comma)$(B)/lib \
	$(if $(TOOL_RPATH),-Wl$(comma)--disable-new-dtags$(comma)-rpath$(comma)'$(TOOL_RPATH)') \
	-ld3d12-d3dq $(DX_LIBS)

$(TOOL_CXXPROGS): $(B)/tools/%: tools/%.cpp $(B)/lib/libd3d12-d3dq.so \
		$(B)/lib/libd3d12-d3dq.so.0 Makefile
	@mkdir -p $(@D)
	$(CXX) -std=c++17 $(WARN) -Wno-unknown-pragmas -O2 -g -MMD -MP $(DX_CFLAGS) \
		$(CPPFLAGS) $(CXXFLAGS) $(LDFLAGS) -o $@ $< $(TOOL_LIBD3D12)

.PHONY: tools
tools: $(TOOL_PROGS)

# --- main targets ------------------------------------------------------------

.PHONY: all userspace
all: modules userspace
userspace: lib tests tools

.PHONY: check
check:
	scripts/check

.PHONY: lint
lint:
	scripts/check --lint-only

# Whether trixie-backports has a kernel line scripts/kernels.pin lacks.
.PHONY: kernels-newer
kernels-newer:
	scripts/kernels --newer

# ThreadSanitizer lane, not part of "make check" (Documentation/library.rst).
.PHONY: check-tsan
check-tsan: modules tsan
	scripts/check-tsan

# Robustness lanes, not part of "make check" (Documentation/robustness.rst).
.PHONY: check-debug fuzz-long stress-long model-long model-breakage
check-debug:
	KERNELS=debug scripts/robust-check

fuzz-long:
	scripts/robust-check --long fuzz

stress-long:
	scripts/robust-check --long stress

# The reference model's checker (Documentation/library.rst): 15 min on
# single- and 15 min on multi-threaded TCG per kernel; and whether it
# catches each defect of tests/model/breakage/*.patch.
model-long:
	scripts/model-long

model-breakage:
	scripts/model-breakage

# Only the module of the kernel that boots is built.
.PHONY: run
run: userspace
	@$(MAKE) -s modules KERNELS=$(RUN_KERNEL) D3DQ_NO_DEPS=1
	@prog=$(CURDIR)/$(B)/tools/d3dq-demo; \
	[ -x "$$prog" ] || prog=$(CURDIR)/$(B)/tools/d3dq-info; \
	echo "scripts/vm-run --kernel $(RUN_KERNEL) -- $$prog"; \
	scripts/vm-run --kernel $(RUN_KERNEL) -- "$$prog"

.PHONY: shell
shell: userspace
	@$(MAKE) -s modules KERNELS=$(RUN_KERNEL) D3DQ_NO_DEPS=1
	scripts/vm-run --kernel $(RUN_KERNEL) --shell

# Benchmarks report: a missed target fails nothing. "make check" runs only
# the smoke test (tests/lib/bench_smoke). Results in build/bench/.
.PHONY: bench
bench: modules lib tools
	scripts/bench

# Installing needs only the library and the tools (no kernel, no tests).
.PHONY: install install-tools install-dkms
install: install-lib install-tools

install-tools: $(TOOL_PROGS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	$(if $(TOOL_PROGS),install -m 755 $(TOOL_PROGS) $(DESTDIR)$(BINDIR)/)
	$(if $(TOOL_MAN),install -m 644 $(TOOL_MAN) $(DESTDIR)$(MANDIR)/man1/)

# The module's source as DKMS wants it, in the repository's own layout
# (kernel/ and include/uapi/drm/), plus the files that load it at boot.
DKMS_SRC := $(DESTDIR)$(DKMSDIR)/d3dq-$(VERSION)
install-dkms:
	install -d $(DKMS_SRC)/kernel $(DKMS_SRC)/include/uapi/drm \
		$(DESTDIR)$(MODPROBEDIR) $(DESTDIR)$(MODULESLOADDIR)
	sed 's|@VERSION@|$(VERSION)|g' dkms/dkms.conf.in >$(DKMS_SRC)/dkms.conf
	install -m 644 kernel/Kbuild kernel/Makefile $(wildcard kernel/*.[ch]) $(DKMS_SRC)/kernel/
	install -m 755 kernel/probe.sh $(DKMS_SRC)/kernel/
	install -m 644 include/uapi/drm/d3dq_drm.h $(DKMS_SRC)/include/uapi/drm/
	install -m 644 dkms/modprobe.conf $(DESTDIR)$(MODPROBEDIR)/d3dq.conf
	install -m 644 dkms/modules-load.conf $(DESTDIR)$(MODULESLOADDIR)/d3dq.conf

# Debian packages from a copy of the tree (dpkg-buildpackage writes to the
# parent directory): build/deb/*.deb, then lintian.
.PHONY: deb
deb:
	scripts/make-deb

# Build the packages, install them into a clean Debian root, let DKMS build
# the module for each kernel, boot it and run the library suites against
# the installed library (Documentation/packaging.rst). Needs root.
.PHONY: check-packages
check-packages:
	scripts/check-packages

.PHONY: clean
clean:
	rm -rf $(B)

.PHONY: help
help:
	@echo 'd3dq targets:'
	@echo '  make            module for each kernel in KERNELS, library, tests, tools'
	@echo '  make check      lint, then every test suite in a VM per kernel'
	@echo '  make lint       checkpatch, sparse (C=2) and W=1 module builds only'
	@echo '  make check-debug  every suite on a debug kernel (KASAN, lockdep, kmemleak; built once, ~1 h)'
	@echo '  make fuzz-long | stress-long   10^7 fuzzer calls + 10^6 multi-process operations / 20x stress per kernel'
	@echo '  make model-long  the reference-model checker, 2 x 15 min per kernel (TCG single + multi)'
	@echo '  make model-breakage  does the checker catch each tests/model/breakage/*.patch?'
	@echo '  make check-tsan  tests/lib with a ThreadSanitizer build of the library, in the VM'
	@echo '  make run        boot the VM (RUN_KERNEL=6.12), load d3dq, run d3dq-demo or d3dq-info'
	@echo '  make shell      interactive busybox shell in the VM, module loaded'
	@echo '  make bench      d3dq-bench in the VM per kernel: build/bench/*.txt, json, png'
	@echo '  make install    PREFIX=/usr/local DESTDIR= LIBDIR= : headers, libraries, .pc, man, tools'
	@echo '                  (offline, no root, no kernel: "make lib tools install" build only userspace)'
	@echo '  make install-dkms  the module source in $$(DKMSDIR)/d3dq-$(VERSION) for DKMS, modprobe.d, modules-load.d'
	@echo '  make deb        Debian packages in build/deb/ (dpkg-buildpackage, lintian)'
	@echo '  make check-packages  install the packages in a clean Debian root, DKMS-build, test in the VM'
	@echo '  make clean      remove build/'
	@echo '  make kernels-newer  does trixie-backports have a kernel line scripts/kernels.pin lacks?'
	@echo '  make modules | lib | tests | tools   one part only'
	@echo 'Variables: KERNELS="6.1 7.3" (default: every line of scripts/kernels.pin),'
	@echo '  RUN_KERNEL, PREFIX, DESTDIR, CFLAGS, LDFLAGS'
	@echo 'Own programs in the VM: scripts/vm-run [--kernel 6.1|6.12|7.3] -- ./prog args'

# A tool's dependency file from a layout that is gone (tools/NAME.c became
# tools/NAME/) would name a source that no longer exists: only the tools
# whose single source still exists keep theirs.
DEP_FILES := $(shell find $(B)/obj $(B)/tests $(B)/tools -name '*.d' 2>/dev/null)
STALE_TOOL_DEPS := $(filter-out \
	$(patsubst tools/%.c,$(B)/tools/%.d,$(wildcard tools/*.c)) \
	$(patsubst tools/%.cpp,$(B)/tools/%.d,$(wildcard tools/*.cpp)), \
	$(filter $(B)/tools/%.d,$(DEP_FILES)))
-include $(filter-out $(STALE_TOOL_DEPS),$(DEP_FILES))
