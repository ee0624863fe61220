# SPDX-License-Identifier: GPL-2.0
# run.sh: timeout 900
# The Debian packages, as an operator gets them: built from a fresh copy of
# the tree (dpkg-buildpackage -us -uc -b, debian/), lintian-clean (each
# override says why), holding what "make install" installs (as Debian lays
# it out), installed with apt-get (dependencies resolved), working (silo
# version; a load and an unload in a namespace by the installed binaries;
# a libsilo user built with pkg-config against libsilo-dev), and purged
# clean: every packaged file gone, /var/lib/silo and /etc/silo with them.
# Skipped where dpkg-buildpackage is absent, and where silo is installed
# already or /etc/silo or /var/lib/silo exist (the host's, not ours to
# touch).
. "$TESTS_DIR/lib.sh"

SRC=$(cd "$TESTS_DIR/.." && pwd)
W="$TMP/pkg"
NSP="${NS}pkg"
installed=0
cleanup() {
	ip netns del "$NSP" 2>/dev/null
	((installed)) && apt-get purge -y silo libsilo0 libsilo-dev >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

if ! command -v dpkg-buildpackage >/dev/null; then
	echo "skip - package: no dpkg-buildpackage (apt-get install dpkg-dev debhelper lintian)"
	exit 0
fi
if dpkg-query -W -f='${Status}' silo libsilo0 libsilo-dev 2>/dev/null |
	grep -q 'ok installed' || [[ -e /etc/silo || -e /var/lib/silo ]]; then
	echo "skip - package: silo is installed here (or /etc/silo, /var/lib/silo exist): not ours to purge"
	exit 0
fi

# A fresh copy: the tracked files and those not ignored, as a clone has
# them with this change (no build output).
mkdir -p "$W/src"
(cd "$SRC" && git ls-files -co --exclude-standard -z |
	xargs -0 cp --parents -t "$W/src") ||
	{ not_ok "copy of the tree" "cp failed"; exit 0; }
if ! (cd "$W/src" && dpkg-buildpackage -us -uc -b) >"$TMP/build.log" 2>&1; then
	not_ok "dpkg-buildpackage -us -uc -b" "$(grep -E 'error|Error' "$TMP/build.log" | head -5 | tr '\n' ' ' | head -c 400)"
	exit 0
fi
debs=("$W"/silo_*.deb "$W"/libsilo0_*.deb "$W"/libsilo-dev_*.deb)
for d in "${debs[@]}"; do
	[[ -f $d ]] || { not_ok "dpkg-buildpackage -us -uc -b" "no $d"; exit 0; }
done
ok "dpkg-buildpackage -us -uc -b: silo, libsilo0, libsilo-dev"

# lintian: nothing but what an override explains (-i: the reasons).
if command -v lintian >/dev/null; then
	lintian --pedantic --display-info "${debs[@]}" >"$TMP/lintian" 2>&1
	grep -E '^[EWIP]: ' "$TMP/lintian" >"$TMP/tags"
	[[ ! -s $TMP/tags ]] && ok "lintian --pedantic: no tag left unexplained" ||
		not_ok "lintian --pedantic: no tag left unexplained" "$(head -5 "$TMP/tags" | tr '\n' ' ')"
else
	echo "skip - lintian: not installed (apt-get install lintian)"
fi

# What the packages hold is what make install installs, Debian's way:
# the man pages compressed, the docs (changelog, copyright) and lintian's
# overrides added.
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
make -C "$W/src" --no-print-directory OUTPUT=build/deb CLI_RPATH= PREFIX=/usr \
	LIBDIR="/usr/lib/$arch" UNITDIR=/lib/systemd/system \
	DESTDIR="$W/dest" install >"$TMP/install.log" 2>&1 ||
	not_ok "make install for the file lists" "$(tail -c 300 "$TMP/install.log")"
(cd "$W/dest" && find . ! -type d | sed 's|^\.||') | sort >"$TMP/make.list"
for d in "${debs[@]}"; do
	dpkg-deb -c "$d" | awk '$1 !~ /^d/ { print $6 }'
done | sed -e 's|^\.||' -e 's|\.gz$||' | grep -Ev '^/usr/share/(doc|lintian)/' |
	sort >"$TMP/deb.list"
if cmp -s "$TMP/make.list" "$TMP/deb.list" && [[ -s $TMP/deb.list ]]; then
	ok "the packages hold what make install installs ($(wc -l <"$TMP/deb.list") files)"
else
	not_ok "the packages hold what make install installs" \
		"$(diff "$TMP/make.list" "$TMP/deb.list" | grep '^[<>]' | head -6 | tr '\n' ' ')"
fi
# Each symbol in libsilo0's symbols file under its version node
# (debian/libsilo0.symbols matches them by node: (symver)LIBSILO_...).
dpkg-deb -I "$W"/libsilo0_*.deb symbols >"$TMP/symbols"
n=$(grep -cE '^ silo_[a-z0-9_]+@LIBSILO_[0-9.]+ [0-9.]+$' "$TMP/symbols")
other=$(grep -vE '^(libsilo\.so\.0 libsilo0 |\* Build-Depends-Package: libsilo-dev$| (silo_[a-z0-9_]+|LIBSILO_[0-9.]+)@LIBSILO_[0-9.]+ [0-9.]+$)' "$TMP/symbols")
((n > 50)) && [[ -z $other ]] &&
	ok "libsilo0's symbols: $n functions, each under its version node" ||
	not_ok "libsilo0's symbols: each under its version node" "$n; $(head -c 300 <<<"$other")"

# Installed as an operator installs them: apt resolves the dependencies.
installed=1
if ! apt-get install -y "${debs[@]}" >"$TMP/apt.log" 2>&1; then
	not_ok "apt-get install ./*.deb" "$(tail -c 300 "$TMP/apt.log")"
	exit 0
fi
ok "apt-get install ./*.deb"
expect "silo version" 0 '^silo [0-9]' /usr/sbin/silo version
# Installed, not enabled nor started: no silo.conf, no change.
if command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
	expect "silod installed disabled" 1 'disabled' systemctl is-enabled silod.service
	expect "silod installed not running" 3 'inactive' systemctl is-active silod.service
else
	echo "skip - silod's unit state: no systemd running here"
fi

# The installed CLI loads silo in a namespace of ours, and unloads it.
ip netns add "$NSP" &&
	ip -n "$NSP" link add p0 type veth peer name p1 &&
	ip -n "$NSP" link set p0 up && ip -n "$NSP" link set p1 up ||
	not_ok "namespace" "ip failed"
isilo() { /usr/sbin/silo --pin-root "$PIN_ROOT" --netns "$NSP" "$@"; }
check "the installed silo loads in a namespace" isilo xdp load p0
expect "xdp status shows it" 0 '"p0"' isilo -j xdp status
check "the installed silo unloads" isilo xdp unload p0
[[ -z $(find "$PIN_ROOT" -type f 2>/dev/null) ]] && ok "no pin left" ||
	not_ok "no pin left" "$(find "$PIN_ROOT" -type f | head -3 | tr '\n' ' ')"

# A libsilo user from libsilo-dev alone: pkg-config's flags, the system's
# headers and library.
# shellcheck disable=SC2046 # pkg-config's words
check "echo_server builds with pkg-config --cflags --libs silo" \
	gcc -Wall -Werror -D_GNU_SOURCE "$SRC/examples/echo_server.c" \
	-o "$TMP/echo_server" $(pkg-config --cflags --libs silo)
expect "echo_server runs on the installed libsilo.so.0" 0 \
	"libsilo\.so\.0 => (/usr)?/lib/$arch/libsilo\.so\.0 " ldd "$TMP/echo_server"
expect "echo_server --help" 0 "usage|Usage" "$TMP/echo_server" --help

# Purged: every file the packages put there gone, and what silo made
# (/var/lib/silo: silo apply's state) with them.
for p in silo libsilo0 libsilo-dev; do dpkg -L "$p"; done | sort -u >"$TMP/files"
mkdir -p /var/lib/silo && echo '{}' >/var/lib/silo/state.json
if apt-get purge -y silo libsilo0 libsilo-dev >"$TMP/purge.log" 2>&1; then
	installed=0
	ok "apt-get purge"
else
	not_ok "apt-get purge" "$(tail -c 300 "$TMP/purge.log")"
fi
left=()
while read -r f; do
	[[ -e $f && ! -d $f ]] && left+=("$f")
done <"$TMP/files"
for d in /etc/silo /var/lib/silo /usr/include/silo; do
	[[ -e $d ]] && left+=("$d")
done
((${#left[@]} == 0)) && ok "purge leaves nothing behind" ||
	not_ok "purge leaves nothing behind" "${left[*]:0:6}"
