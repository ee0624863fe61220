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
# make install         silo, silod and silod's systemd units (PREFIX, DESTDIR)
# V=1                  show the commands

OUTPUT ?= build
override OUTPUT := $(abspath $(OUTPUT))

CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
SANITIZE ?= 0

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(patsubst $(OUTPUT)/%,%,$(2))";
endif

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
LIBS_PC := libbpf libmnl json-c

CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -MMD -MP \
	  -Iinclude -I$(OUTPUT)/skel $(shell $(PKG_CONFIG) --cflags $(LIBS_PC))
LDLIBS += $(shell $(PKG_CONFIG) --libs $(LIBS_PC)) -lelf -lz -lpthread
ifeq ($(SANITIZE),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer \
	  -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Wextra \
	      -Werror -Wno-unused-parameter -MMD -MP -Ivmlinux -Iinclude -Ibpf

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/skel/%.skel.h,$(BPF_SRCS))

LIB_SRCS := $(wildcard user/lib/*.c)
LIB_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(LIB_SRCS))
LIBSILO := $(OUTPUT)/libsilo.a

CLI_SRCS := $(wildcard user/silo/*.c)
CLI_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(CLI_SRCS))
CLI := $(OUTPUT)/silo

SILOD_SRCS := $(wildcard user/silod/*.c)
SILOD_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(SILOD_SRCS))
SILOD := $(OUTPUT)/silod

# One binary per C file under tests/ and tools/.
TEST_BINS := $(patsubst tests/%.c,$(OUTPUT)/tests/%,$(wildcard tests/*.c))
TOOL_BINS := $(patsubst tools/%.c,$(OUTPUT)/tools/%,$(wildcard tools/*.c))
BIN_OBJS := $(addsuffix .o,$(TEST_BINS) $(TOOL_BINS))

.PHONY: all clean test mutate bench lab vmlinux format install fuzz
.DEFAULT_GOAL := all
all: $(CLI) $(SILOD) $(LIBSILO) $(TEST_BINS) $(TOOL_BINS)

# vmlinux.h: made once; "make vmlinux" replaces it only when the BTF changed,
# so regenerating does not rebuild every BPF object.
vmlinux/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp
	$(Q)mv $@.tmp $@

vmlinux:
	$(call msg,GEN,vmlinux/vmlinux.h)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > vmlinux/vmlinux.h.tmp
	$(Q)if cmp -s vmlinux/vmlinux.h.tmp vmlinux/vmlinux.h; then \
		rm vmlinux/vmlinux.h.tmp; \
	else mv vmlinux/vmlinux.h.tmp vmlinux/vmlinux.h; fi

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c vmlinux/vmlinux.h | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/skel/%.skel.h: $(OUTPUT)/bpf/%.bpf.o | $(OUTPUT)/skel
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@.tmp
	$(Q)mv $@.tmp $@

# User objects include skeletons: make them exist before compiling.
$(LIB_OBJS) $(CLI_OBJS) $(SILOD_OBJS) $(BIN_OBJS): | $(SKELS)

$(OUTPUT)/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(LIBSILO): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(CLI): $(CLI_OBJS) $(LIBSILO)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# silod only: --metrics serves HTTP with libmicrohttpd.
$(SILOD): LDLIBS += $(shell $(PKG_CONFIG) --libs libmicrohttpd)
$(SILOD): $(SILOD_OBJS) $(LIBSILO)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(TEST_BINS) $(TOOL_BINS): %: %.o $(LIBSILO)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# Keep test and tool objects: they carry -MMD dependency files.
.SECONDARY:

$(OUTPUT)/bpf $(OUTPUT)/skel:
	$(Q)mkdir -p $@

# Tests run against a sanitizer build of every user-space binary.
test:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)/san SANITIZE=1 all
	$(Q)tests/run.sh $(OUTPUT)/san

# A million mutated frames through silo's XDP program (BPF_PROG_TEST_RUN),
# and the ones it redirects replayed through the kernel (tools/fuzz_xdp.c).
FUZZ_COUNT ?= 1000000
FUZZ_REPLAY ?= 10000
fuzz: all
	$(Q)$(OUTPUT)/tools/fuzz_xdp --count $(FUZZ_COUNT) --replay $(FUZZ_REPLAY) $(FUZZ_ARGS)

# Not part of "test": every mutant is a build and a test run.
mutate:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)/san SANITIZE=1 all
	$(Q)tools/mutate.sh $(OUTPUT)/san $(M)

bench: all
	$(Q)tools/bench.sh $(OUTPUT)

lab: all
	$(Q)tools/lab.sh $(OUTPUT)

PREFIX ?= /usr/local
UNITDIR ?= /etc/systemd/system

install: $(CLI) $(SILOD)
	install -D -m 0755 $(CLI) $(DESTDIR)$(PREFIX)/sbin/silo
	install -D -m 0755 $(SILOD) $(DESTDIR)$(PREFIX)/sbin/silod
	install -D -m 0644 tools/silod.service $(DESTDIR)$(UNITDIR)/silod.service
	install -D -m 0644 tools/silod@.service $(DESTDIR)$(UNITDIR)/silod@.service
	install -D -m 0644 tools/silod.conf $(DESTDIR)/etc/silo/silod.conf

format:
	$(Q)clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

-include $(wildcard $(OUTPUT)/bpf/*.d $(OUTPUT)/*/*.d $(OUTPUT)/*/*/*.d)
