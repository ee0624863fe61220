# SPDX-License-Identifier: GPL-2.0
#
# make                 build everything into $(OUTPUT) (default build/)
# make test            build with ASan/UBSan into $(OUTPUT)/san and run tests
# make mutate [M=ID]   plant each bug of tools/mutations.txt (or only M, a
#                      space-separated list of ids) in a scratch copy and
#                      check that its tests catch it
# make bench           run the benchmarks (JSON lines)
# make fuzz            mutated frames through silo's XDP program (as root)
# make lab             run the built-in lab (network namespaces, veth)
# make vmlinux         regenerate vmlinux/vmlinux.h from the running kernel
# make format          clang-format every C source
# make man             the man pages (docs/man/*.rst) into $(OUTPUT)/man with
#                      rst2man; part of "all" when rst2man is there
# make install         silo, silod, libsilo (shared, static, headers, silo.pc),
#                      silod's systemd units and /etc/silo/silod.conf (from
#                      dist/), the bash completion and the man pages
#                      (PREFIX=/usr/local, DESTDIR; LIBDIR, UNITDIR, ...)
# make uninstall       remove what "make install" installed
# V=1                  show the commands
# WERROR=0             warnings are not errors (user space and BPF)
# VMLINUX_H=path       use this vmlinux.h instead of vmlinux/vmlinux.h
# CPPFLAGS, CFLAGS, LDFLAGS reach every user-space compile and link.

OUTPUT ?= build
override OUTPUT := $(abspath $(OUTPUT))

CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
SANITIZE ?= 0
WERROR ?= 1
VMLINUX_H ?=

# One version for silo, silod and libsilo; libsilo.so.$(SOVERSION) is the
# soname, bumped when the ABI of include/silo/silo.h breaks.
SILO_VERSION := 0.1.0
SOVERSION := 0

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(patsubst $(OUTPUT)/%,%,$(2))";
endif

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
LIBS_PC := libbpf libmnl libnftnl json-c yaml-0.1

ifeq ($(WERROR),1)
WERROR_FLAG := -Werror
endif
# Object files and debug info name sources relative to the tree.
PREFIX_MAP := -ffile-prefix-map=$(CURDIR)=.

# CFLAGS, CPPFLAGS and LDFLAGS are the user's (dpkg-buildflags, say): the
# build's own flags live apart so that setting them never drops those. All
# user-space objects are -fPIC: the same ones make libsilo.a and libsilo.so.
CFLAGS ?= -O2 -g
SILO_CPPFLAGS := -D_GNU_SOURCE -DSILO_VERSION='"$(SILO_VERSION)"' \
		 -Iinclude -I$(OUTPUT)/skel \
		 $(shell $(PKG_CONFIG) --cflags $(LIBS_PC))
SILO_CFLAGS := -Wall -Wextra $(WERROR_FLAG) -std=gnu11 -fPIC -MMD -MP \
	       $(PREFIX_MAP)
SILO_LDFLAGS :=
LDLIBS += $(shell $(PKG_CONFIG) --libs $(LIBS_PC)) -lelf -lz -lpthread
ifeq ($(SANITIZE),1)
SILO_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer \
	       -fno-sanitize-recover=undefined
SILO_LDFLAGS += -fsanitize=address,undefined
endif
ALL_CFLAGS = $(SILO_CPPFLAGS) $(CPPFLAGS) $(SILO_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(SILO_LDFLAGS) $(LDFLAGS)

# vmlinux.h: vmlinux/vmlinux.h, made from the running kernel's BTF, or the
# file VMLINUX_H names, copied into $(OUTPUT) so that a change rebuilds.
ifeq ($(VMLINUX_H),)
VMLINUX_DIR := vmlinux
else
VMLINUX_DIR := $(OUTPUT)/vmlinux
endif

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Wextra \
	      $(WERROR_FLAG) -Wno-unused-parameter -MMD -MP $(PREFIX_MAP) \
	      -I$(VMLINUX_DIR) -Iinclude -Ibpf

# Every object depends on this file, rewritten when the flags change, so a
# build with other flags (SANITIZE, WERROR, CFLAGS, ...) into the same
# OUTPUT rebuilds what it must. Without the tree's and OUTPUT's paths: a
# copy of both (tools/mutate.sh) stays up to date.
FLAGS_STAMP := $(OUTPUT)/.flags
FLAGS_NOW := $(subst $(CURDIR),@SRC@,$(subst $(OUTPUT),@OUTPUT@,$(ALL_CFLAGS) \
	     | $(ALL_LDFLAGS) | $(LDLIBS) | $(BPF_CFLAGS)))
ifneq ($(file < $(FLAGS_STAMP)),$(FLAGS_NOW))
$(shell mkdir -p $(OUTPUT))
$(file > $(FLAGS_STAMP),$(FLAGS_NOW))
endif

# The product's programs in bpf/, the tests' in bpf/tests/; both build into
# $(OUTPUT)/bpf (one name space: a test program is named test_* or silo_test).
BPF_SRCS := $(wildcard bpf/*.bpf.c bpf/tests/*.bpf.c)
BPF_NAMES := $(notdir $(BPF_SRCS:.bpf.c=))
BPF_OBJS := $(patsubst %,$(OUTPUT)/bpf/%.bpf.o,$(BPF_NAMES))
SKELS := $(patsubst %,$(OUTPUT)/skel/%.skel.h,$(BPF_NAMES))

# libsilo's files and its modules' folders (user/lib/MODULE/*.c).
LIB_SRCS := $(wildcard user/lib/*.c user/lib/*/*.c)
LIB_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(LIB_SRCS))
LIBSILO := $(OUTPUT)/libsilo.a
LIBSILO_MAP := user/lib/libsilo.map
LIBSILO_SONAME := libsilo.so.$(SOVERSION)
LIBSILO_SO := $(OUTPUT)/libsilo.so.$(SILO_VERSION)

CLI_SRCS := $(wildcard user/silo/*.c)
CLI_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(CLI_SRCS))
CLI := $(OUTPUT)/silo

SILOD_SRCS := $(wildcard user/silod/*.c)
SILOD_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(SILOD_SRCS))
SILOD := $(OUTPUT)/silod

# One binary per C file of tests/, of tools/ by kind (tools/bench/,
# tools/lab/, tools/fuzz/, ...) and of examples/. The tools' binaries all
# land in $(OUTPUT)/tools/, whatever their folder (tests, benchmarks and
# silod_child.h's ../silod find them there); their objects follow the tree.
TEST_BINS := $(patsubst tests/%.c,$(OUTPUT)/tests/%,$(wildcard tests/*.c))
# tools/lib/ is no tool: its files (the traffic source, source.h) are
# linked into every test's and tool's binary.
TOOLLIB := tools/lib
TOOLLIB_SRCS := $(wildcard $(TOOLLIB)/*.c)
TOOLLIB_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(TOOLLIB_SRCS))
TOOL_SRCS := $(filter-out $(TOOLLIB_SRCS),$(wildcard tools/*.c tools/*/*.c))
TOOL_BINS := $(addprefix $(OUTPUT)/tools/,$(notdir $(TOOL_SRCS:.c=)))
TOOL_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(TOOL_SRCS))
EXAMPLE_BINS := $(patsubst examples/%.c,$(OUTPUT)/examples/%, \
		$(wildcard examples/*.c))
# A tool of more than one file: tools/KIND/NAME.c (its main()) and the
# files of tools/KIND/NAME/, linked together (bench_live, say).
TOOL_PART_SRCS := $(wildcard tools/*/*/*.c)
TOOL_PART_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(TOOL_PART_SRCS))
BIN_OBJS := $(addsuffix .o,$(TEST_BINS) $(EXAMPLE_BINS)) $(TOOL_OBJS) \
	    $(TOOL_PART_OBJS) $(TOOLLIB_OBJS)
ifneq ($(words $(TOOL_BINS)),$(words $(sort $(TOOL_BINS))))
$(error two tools under tools/ share a name: $(sort $(notdir $(TOOL_SRCS))))
endif
ifneq ($(filter $(addprefix $(OUTPUT)/,$(wildcard tools/*)),$(TOOL_BINS)),)
$(error a tool is named as a folder of tools/: $(notdir $(TOOL_SRCS)))
endif

# The harness both tests and tools include ("fwd.h", "pkt.h", ...): frame
# builders, the test and forwarding helpers, silod as a child. Not the
# product's: only the tests' and tools' objects see it.
TESTLIB := tests/lib
$(OUTPUT)/tests/%.o $(OUTPUT)/tools/%.o: private SILO_CPPFLAGS += -I$(TESTLIB) \
							     -I$(TOOLLIB)

.PHONY: all clean test mutate bench lab vmlinux format lint install uninstall \
	fuzz man man-skip installables
.DEFAULT_GOAL := all
all: $(CLI) $(SILOD) $(LIBSILO) $(LIBSILO_SO) $(TEST_BINS) $(TOOL_BINS) \
     $(EXAMPLE_BINS) $(BPF_OBJS)

# Man pages: reStructuredText under docs/man (NAME.SECTION.rst), made into
# troff by rst2man (python3-docutils), as bpftool's are. Without rst2man
# "all" says so and goes on; "make man" fails.
RST2MAN ?= $(firstword $(shell command -v rst2man rst2man.py 2>/dev/null))
MAN_SRCS := $(wildcard docs/man/*.rst)
MAN_PAGES := $(patsubst docs/man/%.rst,$(OUTPUT)/man/%,$(MAN_SRCS))
ifneq ($(RST2MAN),)
all: $(MAN_PAGES)
man: $(MAN_PAGES)
else
all: man-skip
man-skip:
	@echo "  SKIP     man pages: rst2man not found (apt-get install python3-docutils)"
man:
	@echo "make man: rst2man not found: apt-get install python3-docutils" >&2
	@exit 1
endif

# Warnings are errors: a page that rst2man has to guess at is a defect.
$(OUTPUT)/man/%: docs/man/%.rst
	$(call msg,RST2MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)sed 's|@VERSION@|$(SILO_VERSION)|g' $< | \
		$(RST2MAN) --halt=warning --exit-status=warning - > $@.tmp
	$(Q)mv $@.tmp $@

ifeq ($(VMLINUX_H),)
# vmlinux.h: made once; "make vmlinux" replaces it only when the BTF changed,
# so regenerating does not rebuild every BPF object.
vmlinux/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp
	$(Q)mv $@.tmp $@
else
$(VMLINUX_DIR)/vmlinux.h: $(VMLINUX_H)
	$(call msg,COPY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@.tmp
	$(Q)mv $@.tmp $@
endif

vmlinux:
	$(call msg,GEN,vmlinux/vmlinux.h)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > vmlinux/vmlinux.h.tmp
	$(Q)if cmp -s vmlinux/vmlinux.h.tmp vmlinux/vmlinux.h; then \
		rm vmlinux/vmlinux.h.tmp; \
	else mv vmlinux/vmlinux.h.tmp vmlinux/vmlinux.h; fi

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(VMLINUX_DIR)/vmlinux.h $(FLAGS_STAMP) | \
		       $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# A test program may include the contract of the tool that drives it
# (tools/lib/source_abi.h, say).
$(OUTPUT)/bpf/%.bpf.o: bpf/tests/%.bpf.c $(VMLINUX_DIR)/vmlinux.h \
		       $(FLAGS_STAMP) | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Itools/lib -c $< -o $@

# Each bpf/lib header compiles alone (with the headers it includes), so a
# program or a unit test in bpf/tests/ may include any one of them.
BPF_LIB_CHECKS := $(patsubst bpf/lib/%.h,$(OUTPUT)/bpf/lib/%.h.ok, \
		  $(wildcard bpf/lib/*.h))
all: $(BPF_LIB_CHECKS)
$(OUTPUT)/bpf/lib/%.h.ok: bpf/lib/%.h $(VMLINUX_DIR)/vmlinux.h $(FLAGS_STAMP)
	$(call msg,HDRCHK,$<)
	$(Q)mkdir -p $(@D)
	$(Q)echo '#include "lib/$*.h"' | \
		$(CLANG) $(filter-out -MMD -MP,$(BPF_CFLAGS)) \
		-Wno-unused-function -MMD -MP -MF $@.d -MT $@ -fsyntax-only -x c -
	$(Q)touch $@

$(OUTPUT)/skel/%.skel.h: $(OUTPUT)/bpf/%.bpf.o | $(OUTPUT)/skel
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@.tmp
	$(Q)mv $@.tmp $@

# User objects include skeletons: make them exist before compiling.
$(LIB_OBJS) $(CLI_OBJS) $(SILOD_OBJS) $(BIN_OBJS): | $(SKELS)

$(OUTPUT)/%.o: %.c $(FLAGS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIBSILO): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

# The shared library exports only what include/silo/silo.h declares
# (libsilo.map); silod and the tests link libsilo.a, internals included.
$(LIBSILO_SO): $(LIB_OBJS) $(LIBSILO_MAP)
	$(call msg,LINK,$@)
	$(Q)$(CC) -shared $(ALL_LDFLAGS) -Wl,-soname,$(LIBSILO_SONAME) \
		-Wl,--version-script=$(LIBSILO_MAP) $(LIB_OBJS) $(LDLIBS) -o $@
	$(Q)ln -sf $(notdir $@) $(OUTPUT)/$(LIBSILO_SONAME)
	$(Q)ln -sf $(LIBSILO_SONAME) $(OUTPUT)/libsilo.so

# The CLI is a libsilo.so user like any other: silo.h is all it sees. It
# finds the library beside it in the build tree and, installed in SBINDIR,
# in ../lib (LIBDIR's default); else where the dynamic linker looks.
CLI_RPATH := -Wl,-rpath,'$$ORIGIN:$$ORIGIN/../lib'
$(CLI): $(CLI_OBJS) $(LIBSILO_SO)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $(CLI_OBJS) -L$(OUTPUT) -lsilo $(CLI_RPATH) \
		$(LDLIBS) -o $@

# silod only: --metrics serves HTTP with libmicrohttpd; libsystemd's
# sd_notify tells systemd it is ready and alive (Type=notify, WatchdogSec=);
# libnetfilter_conntrack makes the connections XDP forwards liberal.
SILOD_PC := libmicrohttpd libsystemd libnetfilter_conntrack
$(SILOD): LDLIBS += $(shell $(PKG_CONFIG) --libs $(SILOD_PC))
$(SILOD): $(SILOD_OBJS) $(LIBSILO)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(LDLIBS) -o $@

# The differential harness's frames makes conntrack's TCP entries liberal.
$(OUTPUT)/tools/frames: LDLIBS += $(shell $(PKG_CONFIG) --libs libnetfilter_conntrack)

$(EXAMPLE_BINS): %: %.o $(LIBSILO)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(LDLIBS) -o $@

$(TEST_BINS): %: %.o $(TOOLLIB_OBJS) $(LIBSILO)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(LDLIBS) -o $@

# $(OUTPUT)/tools/NAME from $(OUTPUT)/tools/KIND/NAME.o and its parts.
$(foreach s,$(TOOL_SRCS),$(eval \
	$(OUTPUT)/tools/$(notdir $(s:.c=)): $(OUTPUT)/$(s:.c=.o) \
	$(patsubst %.c,$(OUTPUT)/%.o,$(wildcard $(s:.c=)/*.c))))
$(TOOL_BINS): $(TOOLLIB_OBJS) $(LIBSILO)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $(filter %.o,$^) $(LIBSILO) $(LDLIBS) -o $@

# Keep test and tool objects: they carry -MMD dependency files.
.SECONDARY:

$(OUTPUT)/bpf $(OUTPUT)/skel:
	$(Q)mkdir -p $@

# Tests run against a sanitizer build of every user-space binary.
test:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)/san SANITIZE=1 all
	$(Q)tests/run.sh $(OUTPUT)/san

# A million mutated frames through silo's XDP program (BPF_PROG_TEST_RUN),
# and the ones it redirects replayed through the kernel (tools/fuzz/fuzz_xdp.c).
FUZZ_COUNT ?= 1000000
FUZZ_REPLAY ?= 10000
fuzz: all
	$(Q)$(OUTPUT)/tools/fuzz_xdp --count $(FUZZ_COUNT) --replay $(FUZZ_REPLAY) $(FUZZ_ARGS)

# Not part of "test": every mutant is a build and a test run.
mutate:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)/san SANITIZE=1 all
	$(Q)tools/mutate.sh $(OUTPUT)/san $(M)

bench: all
	$(Q)tools/bench/bench.sh $(OUTPUT)

lab: all
	$(Q)tools/lab/lab.sh $(OUTPUT)

PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
UNITDIR ?= $(PREFIX)/lib/systemd/system
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
MANDIR ?= $(PREFIX)/share/man
# silod reads /etc/silo/silod.conf whatever the prefix.
CONFDIR := /etc/silo
INSTALL ?= install

# The public contracts of include/silo/abi/ (abi.h includes them); the
# private layouts of internal.h are silo's own and are not installed.
ABI_PUBLIC := $(filter-out include/silo/abi/internal.h, \
		$(wildcard include/silo/abi/*.h))

# Files made from templates (@SBINDIR@ and the like), for this install's
# directories: made at install time, so "make install PREFIX=..." after a
# plain "make" gets its own.
GEN_SED = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@SBINDIR@|$(SBINDIR)|g' \
	      -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
	      -e 's|@VERSION@|$(SILO_VERSION)|g'
UNITS := silod.service silod@.service

# silo.8 -> $(MANDIR)/man8/silo.8, and so on by the suffix.
MAN_INSTALLED := $(foreach p,$(notdir $(MAN_PAGES)), \
		 $(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(p)))/$(p))

# What "make install" installs, built: "make installables" (debian/rules
# builds them so, then installs them in a step of their own).
INSTALLABLES := $(CLI) $(SILOD) $(LIBSILO) $(LIBSILO_SO) \
		$(if $(RST2MAN),$(MAN_PAGES))
installables: $(INSTALLABLES)

install: $(INSTALLABLES)
	$(Q)mkdir -p $(OUTPUT)/gen
	$(Q)for f in $(UNITS); do \
		$(GEN_SED) dist/$$f.in > $(OUTPUT)/gen/$$f || exit 1; done
	$(Q)$(GEN_SED) user/lib/silo.pc.in > $(OUTPUT)/gen/silo.pc
	$(INSTALL) -D -m 0755 $(CLI) $(DESTDIR)$(SBINDIR)/silo
	$(INSTALL) -D -m 0755 $(SILOD) $(DESTDIR)$(SBINDIR)/silod
	$(INSTALL) -D -m 0644 $(LIBSILO_SO) \
		$(DESTDIR)$(LIBDIR)/$(notdir $(LIBSILO_SO))
	ln -sf $(notdir $(LIBSILO_SO)) $(DESTDIR)$(LIBDIR)/$(LIBSILO_SONAME)
	ln -sf $(LIBSILO_SONAME) $(DESTDIR)$(LIBDIR)/libsilo.so
	$(INSTALL) -D -m 0644 $(LIBSILO) $(DESTDIR)$(LIBDIR)/libsilo.a
	$(INSTALL) -D -m 0644 include/silo/silo.h $(DESTDIR)$(INCLUDEDIR)/silo/silo.h
	$(INSTALL) -D -m 0644 include/silo/abi.h $(DESTDIR)$(INCLUDEDIR)/silo/abi.h
	$(INSTALL) -D -m 0644 include/silo/apply.h $(DESTDIR)$(INCLUDEDIR)/silo/apply.h
	$(INSTALL) -D -m 0644 include/silo/envelope.h $(DESTDIR)$(INCLUDEDIR)/silo/envelope.h
	$(Q)for h in $(notdir $(ABI_PUBLIC)); do \
		echo "$(INSTALL) -D -m 0644 include/silo/abi/$$h $(DESTDIR)$(INCLUDEDIR)/silo/abi/$$h"; \
		$(INSTALL) -D -m 0644 include/silo/abi/$$h \
			$(DESTDIR)$(INCLUDEDIR)/silo/abi/$$h || exit 1; done
	$(INSTALL) -D -m 0644 $(OUTPUT)/gen/silo.pc $(DESTDIR)$(PKGCONFIGDIR)/silo.pc
	$(INSTALL) -D -m 0644 $(OUTPUT)/gen/silod.service \
		$(DESTDIR)$(UNITDIR)/silod.service
	$(INSTALL) -D -m 0644 $(OUTPUT)/gen/silod@.service \
		$(DESTDIR)$(UNITDIR)/silod@.service
	$(INSTALL) -D -m 0644 dist/silod.conf $(DESTDIR)$(CONFDIR)/silod.conf
	$(INSTALL) -D -m 0644 completion/silo $(DESTDIR)$(COMPLETIONDIR)/silo
ifneq ($(RST2MAN),)
	$(Q)for p in $(notdir $(MAN_PAGES)); do \
		echo "$(INSTALL) -D -m 0644 $(OUTPUT)/man/$$p $(DESTDIR)$(MANDIR)/man$${p##*.}/$$p"; \
		$(INSTALL) -D -m 0644 $(OUTPUT)/man/$$p \
			$(DESTDIR)$(MANDIR)/man$${p##*.}/$$p || exit 1; done
else
	@echo "man pages not installed: rst2man not found (apt-get install python3-docutils)"
endif

# Exactly the files "make install" installs, and the two directories that
# are silo's alone when they are left empty.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/silo $(DESTDIR)$(SBINDIR)/silod \
		$(DESTDIR)$(LIBDIR)/$(notdir $(LIBSILO_SO)) \
		$(DESTDIR)$(LIBDIR)/$(LIBSILO_SONAME) \
		$(DESTDIR)$(LIBDIR)/libsilo.so $(DESTDIR)$(LIBDIR)/libsilo.a \
		$(DESTDIR)$(INCLUDEDIR)/silo/silo.h \
		$(DESTDIR)$(INCLUDEDIR)/silo/abi.h \
		$(DESTDIR)$(INCLUDEDIR)/silo/apply.h \
		$(DESTDIR)$(INCLUDEDIR)/silo/envelope.h \
		$(addprefix $(DESTDIR)$(INCLUDEDIR)/silo/abi/,$(notdir $(ABI_PUBLIC))) \
		$(DESTDIR)$(PKGCONFIGDIR)/silo.pc \
		$(addprefix $(DESTDIR)$(UNITDIR)/,$(UNITS)) \
		$(DESTDIR)$(CONFDIR)/silod.conf \
		$(DESTDIR)$(COMPLETIONDIR)/silo $(MAN_INSTALLED)
	rmdir $(DESTDIR)$(INCLUDEDIR)/silo/abi 2>/dev/null || true
	rmdir $(DESTDIR)$(INCLUDEDIR)/silo 2>/dev/null || true
	rmdir $(DESTDIR)$(CONFDIR) 2>/dev/null || true

format:
	$(Q)clang-format -i $$(git ls-files '*.c' '*.h' ':!vmlinux/')

# What CI checks before building: the C files as clang-format writes them,
# every shell script clean under shellcheck (.shellcheckrc says which
# checks are off, and why), and the tree's shape (tools/lint/layout.py:
# file and function sizes, include walls, no calls in a circle).
LINT_SCRIPTS = $$(git ls-files '*.sh' .ci/run completion/silo)
lint:
	$(call msg,LINT,clang-format)
	$(Q)clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h' ':!vmlinux/')
	$(call msg,LINT,shellcheck)
	$(Q)shellcheck $(LINT_SCRIPTS)
	$(call msg,LINT,layout)
	$(Q)python3 tools/lint/layout.py .

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

# The dependency files of every object (-MMD), wherever its folder, and of
# the bpf/lib header checks.
-include $(patsubst %.o,%.d,$(BPF_OBJS) $(LIB_OBJS) $(CLI_OBJS) \
	   $(SILOD_OBJS) $(BIN_OBJS)) $(addsuffix .d,$(BPF_LIB_CHECKS))
