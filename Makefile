# SPDX-License-Identifier: GPL-2.0
#
# d3dq: the single entry point. "make help" lists the targets.
#
# Everything generated lands in build/. Kernels are named by their line
# (6.1, 6.12); KERNELS="6.1 6.12" (the default) narrows with KERNELS=6.1.

VERSION := 0.1.0
SOVERSION := 0
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DESTDIR ?=

KERNELS ?= 6.1 6.12
export KERNELS

B := build
CC ?= cc
PKG_CONFIG ?= pkg-config

.DEFAULT_GOAL := all
.SUFFIXES:
.DELETE_ON_ERROR:

# Goals that need neither the Debian packages nor the kernel names.
NODEPS_GOALS := clean help
ifneq ($(filter-out $(NODEPS_GOALS),$(or $(MAKECMDGOALS),all)),)
ifeq ($(D3DQ_NO_DEPS),)
DEPS_RC := $(shell scripts/deps >&2; echo $$?)
ifneq ($(DEPS_RC),0)
$(error scripts/deps failed)
endif
endif
# "6.1 <abi> 6.12 <abi>" -> the ABIs.
KPAIRS := $(shell scripts/kernels)
ifeq ($(KPAIRS),)
$(error scripts/kernels could not resolve KERNELS="$(KERNELS)")
endif
ABIS := $(foreach i,$(shell seq 2 2 $(words $(KPAIRS))),$(word $(i),$(KPAIRS)))
DRM_CFLAGS := $(shell $(PKG_CONFIG) --cflags libdrm)
DRM_LIBS := $(shell $(PKG_CONFIG) --libs libdrm)
endif

WARN := -Wall -Wextra -Werror
COMMON_CFLAGS := $(WARN) -O2 -g -pthread -MMD -MP \
	-Iinclude -Iinclude/uapi/drm $(DRM_CFLAGS)

# --- kernel module -----------------------------------------------------------

.PHONY: modules
modules:
	@for abi in $(ABIS); do scripts/build-module $$abi || exit 1; done

# --- library -----------------------------------------------------------------

LIB_SRCS := $(wildcard libd3dq/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/obj/%.o)
LIB_MAP := $(wildcard libd3dq/libd3dq.map)
comma := ,
LIB_MAP_FLAG := $(if $(LIB_MAP),-Wl$(comma)--version-script=$(LIB_MAP))
LIB_SO := $(B)/lib/libd3dq.so.$(VERSION)
LIB_A := $(B)/lib/libd3dq.a
LIB_PC := $(B)/lib/pkgconfig/libd3dq.pc
LIB_CFLAGS := -std=c11 -fPIC -fvisibility=hidden $(COMMON_CFLAGS)

ifneq ($(LIB_SRCS),)
LIB_TARGETS := $(LIB_SO) $(B)/lib/libd3dq.so.$(SOVERSION) $(B)/lib/libd3dq.so \
	$(LIB_A) $(if $(wildcard libd3dq/libd3dq.pc.in),$(LIB_PC))
endif

.PHONY: lib
lib: $(LIB_TARGETS)

$(B)/obj/libd3dq/%.o: libd3dq/%.c Makefile
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) $(CFLAGS) -c -o $@ $<

$(LIB_SO): $(LIB_OBJS) $(LIB_MAP)
	@mkdir -p $(@D)
	$(CC) -shared -pthread -Wl,-soname,libd3dq.so.$(SOVERSION) -Wl,--no-undefined \
		$(LIB_MAP_FLAG) $(LDFLAGS) \
		-o $@ $(LIB_OBJS) $(DRM_LIBS)

$(B)/lib/libd3dq.so.$(SOVERSION) $(B)/lib/libd3dq.so: $(LIB_SO)
	ln -sfn $(notdir $<) $@

$(LIB_A): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

# pkg-config file for a given prefix: $(call pc_rule,prefix,libdir,includedir)
pc_subst = sed -e 's|@PREFIX@|$(1)|g' -e 's|@EXEC_PREFIX@|$(1)|g' \
	-e 's|@LIBDIR@|$(2)|g' -e 's|@INCLUDEDIR@|$(3)|g' -e 's|@VERSION@|$(VERSION)|g'

$(LIB_PC): libd3dq/libd3dq.pc.in Makefile
	@mkdir -p $(@D)
	$(call pc_subst,$(PREFIX),$(LIBDIR),$(INCLUDEDIR)) $< >$@

# --- tests -------------------------------------------------------------------

# Every tests/<suite>/*.c is one program; tests/<suite>/util/*.c is linked
# into each program of the suite.
SUITES := $(patsubst tests/%/,%,$(sort $(dir $(wildcard tests/*/*.c))))
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

define suite_rules
$(1)_PROGS := $$(patsubst tests/$(1)/%.c,$(B)/tests/$(1)/%,$$(wildcard tests/$(1)/*.c))
$(1)_UTIL := $$(wildcard tests/$(1)/util/*.c) $$(suite_util_$(1))
TEST_PROGS += $$($(1)_PROGS)
$(B)/tests/$(1)/%: tests/$(1)/%.c $$($(1)_UTIL) $$(suite_deps_$(1)) Makefile | $(KSELFTEST)
	@mkdir -p $$(@D); rm -f $$@
	$$(CC) $$(TEST_CFLAGS) -Itests/$(1) $$(suite_cflags_$(1)) $$(CFLAGS) $$(LDFLAGS) -o $$@ \
		$$< $$($(1)_UTIL) $$(or $$(suite_libs_$(1)),$$(suite_libs_lib))
endef
$(foreach s,$(SUITES),$(eval $(call suite_rules,$(s))))

.PHONY: tests
tests: $(TEST_PROGS)

# --- tools -------------------------------------------------------------------

# A tool that includes d3dq/d3dq.h links libd3dq; the others only libdrm.
TOOL_PROGS := $(patsubst tools/%.c,$(B)/tools/%,$(wildcard tools/*.c))
TOOLS_WITH_LIB := $(patsubst tools/%.c,$(B)/tools/%,\
	$(shell grep -l 'include.*d3dq/d3dq\.h' tools/*.c 2>/dev/null))
TOOL_LIBD3DQ := -L$(B)/lib -Wl$(comma)-rpath$(comma)'$$ORIGIN/../lib' -ld3dq

$(TOOLS_WITH_LIB): $(B)/lib/libd3dq.so
$(TOOLS_WITH_LIB): TOOL_LIBS = $(TOOL_LIBD3DQ)

$(B)/tools/%: tools/%.c Makefile
	@mkdir -p $(@D)
	$(CC) -std=c11 $(COMMON_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(TOOL_LIBS) $(DRM_LIBS) -lpthread

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

.PHONY: run
run: all
	@prog=$(CURDIR)/$(B)/tools/d3dq-demo; \
	[ -x "$$prog" ] || prog=$(CURDIR)/$(B)/tools/d3dq-info; \
	echo "scripts/vm-run -- $$prog"; \
	scripts/vm-run -- "$$prog"

.PHONY: shell
shell: all
	scripts/vm-run --shell

# Benchmarks report: a missed target fails nothing. "make check" runs only
# the smoke test (tests/lib/bench_smoke). Results in build/bench/.
.PHONY: bench
bench: modules lib tools
	scripts/bench

.PHONY: install
install: userspace
	install -d $(DESTDIR)$(INCLUDEDIR)/d3dq $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man3
	install -m 644 include/uapi/drm/d3dq_drm.h $(DESTDIR)$(INCLUDEDIR)/d3dq/
	$(if $(wildcard include/d3dq/d3dq.h),install -m 644 include/d3dq/d3dq.h $(DESTDIR)$(INCLUDEDIR)/d3dq/)
ifneq ($(LIB_SRCS),)
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sfn libd3dq.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libd3dq.so.$(SOVERSION)
	ln -sfn libd3dq.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libd3dq.so
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
endif
ifneq ($(wildcard libd3dq/libd3dq.pc.in),)
	$(call pc_subst,$(PREFIX),$(LIBDIR),$(INCLUDEDIR)) libd3dq/libd3dq.pc.in \
		>$(DESTDIR)$(LIBDIR)/pkgconfig/libd3dq.pc
endif
	$(if $(wildcard libd3dq/man/*.3),install -m 644 $(wildcard libd3dq/man/*.3) $(DESTDIR)$(MANDIR)/man3/)
	$(if $(TOOL_PROGS),install -m 755 $(TOOL_PROGS) $(DESTDIR)$(BINDIR)/)

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
	@echo '  make fuzz-long | stress-long   10^7 fuzzer calls / 20x stress per kernel'
	@echo '  make model-long  the reference-model checker, 2 x 15 min per kernel (TCG single + multi)'
	@echo '  make model-breakage  does the checker catch each tests/model/breakage/*.patch?'
	@echo '  make run        boot the VM (6.12), load d3dq, run d3dq-demo or d3dq-info'
	@echo '  make shell      interactive busybox shell in the VM, module loaded'
	@echo '  make bench      d3dq-bench in the VM per kernel: build/bench/*.txt, json, png'
	@echo '  make install    PREFIX=/usr/local DESTDIR= : headers, library, .pc, man, tools'
	@echo '  make clean      remove build/'
	@echo '  make modules | lib | tests | tools   one part only'
	@echo 'Variables: KERNELS="6.1 6.12" (default both), PREFIX, DESTDIR, CFLAGS, LDFLAGS'
	@echo 'Own programs in the VM: scripts/vm-run [--kernel 6.1|6.12] -- ./prog args'

-include $(shell find $(B)/obj $(B)/tests $(B)/tools -name '*.d' 2>/dev/null)
