# SPDX-License-Identifier: GPL-2.0
# "make install" from the build under test into a staging directory, as a
# Debian package would (PREFIX=/usr, DESTDIR): every file is there, the units
# run /usr/sbin/silod, the man pages are in man8, man5 and man3, libsilo.so exports only what silo.h declares, a libsilo
# user builds from silo.pc against the installed headers and shared library
# alone, and runs; "make uninstall" leaves no file behind.
. "$TESTS_DIR/lib.sh"

SRC=$(cd "$TESTS_DIR/.." && pwd)
DEST="$TMP/dest"
# The same SANITIZE as the build under test, so that make finds it up to
# date (it rebuilds when the flags differ) and the example links alike.
san=0
readelf -d "$BUILD/silo" | grep -q 'NEEDED.*libasan' && san=1
mk() { make -C "$SRC" --no-print-directory OUTPUT="$BUILD" SANITIZE=$san \
	PREFIX=/usr DESTDIR="$DEST" "$@"; }

if ! mk install >"$TMP/install.log" 2>&1; then
	not_ok "make install" "$(tail -c 300 "$TMP/install.log")"
	exit 0
fi
ok "make install"

files=(usr/sbin/silo usr/sbin/silod usr/lib/libsilo.so.0 usr/lib/libsilo.so
	usr/lib/libsilo.a usr/include/silo/silo.h usr/include/silo/abi.h
	usr/include/silo/apply.h usr/include/silo/envelope.h
	usr/include/silo/abi/common.h usr/include/silo/abi/route.h
	usr/include/silo/abi/reuseport.h usr/include/silo/abi/service.h
	usr/lib/pkgconfig/silo.pc etc/silo/silod.conf
	usr/lib/systemd/system/silod.service
	usr/lib/systemd/system/silod@.service
	usr/share/bash-completion/completions/silo)
# The man pages are built when rst2man is there (python3-docutils).
if command -v rst2man >/dev/null || command -v rst2man.py >/dev/null; then
	files+=(usr/share/man/man8/silo.8 usr/share/man/man8/silod.8
		usr/share/man/man5/silod.conf.5 usr/share/man/man3/libsilo.3)
	for obj in xdp route genid stats reuseport service daemon doctor; do
		files+=("usr/share/man/man8/silo-$obj.8")
	done
	have_man=1
else
	echo "skip - man pages installed: no rst2man (apt-get install python3-docutils)"
	have_man=0
fi
missing=()
for f in "${files[@]}"; do
	[[ -e $DEST/$f ]] || missing+=("$f")
done
((${#missing[@]} == 0)) && ok "installed files" ||
	not_ok "installed files" "missing: ${missing[*]}"
# silo's private layouts are not part of what an application builds on.
[[ ! -e $DEST/usr/include/silo/abi/internal.h ]] &&
	ok "silo/abi/internal.h is not installed" ||
	not_ok "silo/abi/internal.h is not installed" "it is"

expect "silod.service runs /usr/sbin/silod" 0 '^ExecStart=/usr/sbin/silod$' \
	grep '^ExecStart=' "$DEST/usr/lib/systemd/system/silod.service"
expect "silod@.service runs /usr/sbin/silod" 0 \
	'^ExecStart=/usr/sbin/silod --netns %i$' \
	grep '^ExecStart=' "$DEST/usr/lib/systemd/system/silod@.service"
if ((have_man)); then
	expect "man finds the installed silo(8)" 0 '^SILO\(8\)' \
		env MANPATH="$DEST/usr/share/man" man -P cat 8 silo
	expect "man finds the installed silo-xdp(8)" 0 '^SILO-XDP\(8\)' \
		env MANPATH="$DEST/usr/share/man" man -P cat 8 silo-xdp
	expect "man finds the installed silod.conf(5)" 0 'heartbeat-ms' \
		env MANPATH="$DEST/usr/share/man" man -P cat 5 silod.conf
fi
expect "libsilo.so.0 is the soname" 0 'SONAME.*\[libsilo\.so\.0\]' \
	readelf -d "$DEST/usr/lib/libsilo.so.0"

# Exported: exactly the functions silo.h declares (with apply.h and
# envelope.h, which it includes).
# (nm prints name@@VERSION; the version node itself is an A symbol.)
nm -D --defined-only "$DEST/usr/lib/libsilo.so.0" |
	awk '$2 != "A" {sub(/@.*/, "", $NF); print $NF}' | sort -u >"$TMP/exported"
grep -hoE '\bsilo_[a-z0-9_]+[[:space:]]*\(' "$DEST/usr/include/silo/silo.h" \
	"$DEST/usr/include/silo/apply.h" "$DEST/usr/include/silo/envelope.h" |
	tr -d ' \t(' | sort -u >"$TMP/declared"
if cmp -s "$TMP/exported" "$TMP/declared" && [[ -s $TMP/declared ]]; then
	ok "libsilo.so exports only silo.h ($(wc -l <"$TMP/declared") functions)"
else
	not_ok "libsilo.so exports only silo.h" \
		"$(diff "$TMP/declared" "$TMP/exported" | grep '^[<>]' | head -5 | tr '\n' ' ')"
fi

# Every export carries a version of libsilo.map (LIBSILO_0 and later).
unversioned=$(objdump -T "$DEST/usr/lib/libsilo.so.0" |
	awk '$2 == "g" && $4 == ".text" && $(NF - 1) !~ /^LIBSILO_/ {print $NF}')
if [[ -z $unversioned ]] &&
	objdump -T "$DEST/usr/lib/libsilo.so.0" | grep -q ' LIBSILO_0 *silo_open$'; then
	ok "every export is versioned (LIBSILO_0)"
else
	not_ok "every export is versioned (LIBSILO_0)" \
		"unversioned: $(echo "$unversioned" | head -5 | tr '\n' ' ')"
fi

# A libsilo user, from silo.pc and the installed files only.
export PKG_CONFIG_PATH="$DEST/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$DEST"
flags=$(pkg-config --cflags --libs silo)
expect "pkg-config silo" 0 "^-I$DEST/usr/include .*-L$DEST/usr/lib -lsilo" \
	echo "$flags"
sanflags=()
((san)) && sanflags=("-fsanitize=address,undefined")
# shellcheck disable=SC2086 # $flags is a list of words
check "echo_server builds against the installed libsilo" \
	gcc -Wall -Werror -D_GNU_SOURCE "${sanflags[@]}" \
	"$SRC/examples/echo_server.c" -o "$TMP/echo_server" $flags
export -n PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
expect "echo_server links libsilo.so.0" 0 'NEEDED.*\[libsilo\.so\.0\]' \
	readelf -d "$TMP/echo_server"
expect "echo_server loads the installed libsilo.so.0" 0 \
	"libsilo\.so\.0 => $DEST/usr/lib/libsilo\.so\.0 " \
	env LD_LIBRARY_PATH="$DEST/usr/lib" ldd "$TMP/echo_server"
expect "echo_server --help runs" 0 "usage|Usage" \
	env LD_LIBRARY_PATH="$DEST/usr/lib" "$TMP/echo_server" --help

# The CLI is a libsilo.so user too: installed, it finds the installed one.
expect "the installed silo loads the installed libsilo.so.0" 0 \
	"libsilo\.so\.0 => $DEST/usr/(sbin/\.\./)?lib/libsilo\.so\.0 " \
	ldd "$DEST/usr/sbin/silo"
expect "the installed silo runs" 0 '^silo [0-9]' "$DEST/usr/sbin/silo" --version

if mk uninstall >"$TMP/uninstall.log" 2>&1; then
	ok "make uninstall"
else
	not_ok "make uninstall" "$(tail -c 300 "$TMP/uninstall.log")"
fi
left=$(find "$DEST" ! -type d)
[[ -z $left ]] && ok "uninstall leaves no file" ||
	not_ok "uninstall leaves no file" "$(tr '\n' ' ' <<<"$left" | head -c 300)"
