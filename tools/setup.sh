#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tools/setup.sh: everything silo needs on a fresh Debian 12 machine, as root:
# the build's and the tests' packages (only what is missing is installed),
# and bpffs at /sys/fs/bpf.
set -euo pipefail

PACKAGES=(
	make gcc clang llvm pkg-config # build
	libbpf-dev bpftool libelf-dev zlib1g-dev libmnl-dev libjson-c-dev
	libnftnl-dev # the envelope: nftables rulesets read
	libyaml-dev # silo.conf(5)
	libmicrohttpd-dev # silod --metrics
	libsystemd-dev # silod: sd_notify (Type=notify, WatchdogSec=)
	libnetfilter-conntrack-dev # silod: liberal TCP tracking (forward-established)
	python3-docutils # man pages (rst2man)
	iproute2 ethtool jq util-linux procps curl # lab and tests
	nftables iptables # envelope tests (iptables: its -legacy variant)
	conntrack # forward-established tests: conntrack -L, -D
	groff-base man-db # man page tests: render, man -l
	clang-format shellcheck python3 # make lint (python3: tools/lint/layout.py)
	python3-yaml # tests/dist.sh: the DaemonSet's manifest
	dpkg-dev debhelper lintian # tests/package.sh: the Debian packages
)

if [[ $(id -u) != 0 ]]; then
	echo "tools/setup.sh installs packages: run it as root (sudo)" >&2
	exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
if ((${#missing[@]})); then
	echo "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update
	apt-get install -y --no-install-recommends "${missing[@]}"
fi

if ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf
	echo "mounted bpffs at /sys/fs/bpf"
fi
if [[ ! -r /sys/kernel/btf/vmlinux ]]; then
	echo "warning: no /sys/kernel/btf/vmlinux: the kernel lacks BTF, which silo's build needs" >&2
fi
