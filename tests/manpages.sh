# SPDX-License-Identifier: GPL-2.0
# The man pages (docs/man/*.rst) name what the programs do: silo.8 the
# objects and global options that 'silo --help' and the bash completion
# name, with a page silo-OBJECT.8 for each object (as bpftool-OBJECT.8)
# that names its commands and options as 'silo OBJECT help' and the
# completion do, silod.8 the options of 'silod --help',
# silod.conf.5 the keys silod accepts, libsilo.3 the functions silo.h
# declares; each compared both ways, a difference named word by word. The
# built pages ($BUILD/man) render without a warning and have every section.
. "$TESTS_DIR/lib.sh"

MAN="$TESTS_DIR/../docs/man"
SILOD="$BUILD/silod"

# agree NAME WHERE_A WORDS_A WHERE_B WORDS_B: the same words, as sets.
agree() {
	local a b only_a only_b why=
	a=$(tr ' ' '\n' <<<"$3" | grep -v '^$' | sort -u)
	b=$(tr ' ' '\n' <<<"$5" | grep -v '^$' | sort -u)
	only_a=$(comm -23 <(echo "$a") <(echo "$b") | grep -v '^$' | tr '\n' ' ')
	only_b=$(comm -13 <(echo "$a") <(echo "$b") | grep -v '^$' | tr '\n' ' ')
	[[ -n $only_a ]] && why="in $2, not in $4: ${only_a% }"
	[[ -n $only_a && -n $only_b ]] && why+="; "
	[[ -n $only_b ]] && why+="in $4, not in $2: ${only_b% }"
	if [[ -z $why ]]; then
		ok "$1"
	else
		not_ok "$1" "$why (add it where it is missing)"
	fi
}

# Plain text of reStructuredText markup: "**silo xdp load** *DEV*" ->
# "silo xdp load DEV".
rst_plain() {
	sed -e 's/\\ //g' -e 's/\\|/|/g' -e 's/\*\*//g' -e 's/\*//g' -e 's/\\//g'
}

# rst_titles FILE: every section title, in order.
# rst_section FILE TITLE: the lines under TITLE, up to the next title.
rst_walk() {
	awk -v t="$2" -v mode="$3" '
		{ l[NR] = $0 }
		END {
			for (i = 1; i <= NR; i++) {
				if (l[i] != "" && l[i] !~ /^(=+|-+)$/ &&
				    l[i + 1] ~ /^(=+|-+)$/) {
					if (mode == "titles")
						print l[i]
					on = (l[i] == t)
					i++
					continue
				}
				if (on && mode == "section")
					print l[i]
			}
		}' "$1"
}
rst_titles() { rst_walk "$1" "" titles; }
rst_section() { rst_walk "$1" "$2" section; }

# The items of silo.8's OBJECTS section ("**xdp**"): its objects.
man_object_items() {
	rst_section "$MAN/silo.8.rst" OBJECTS | grep -E '^\*\*[a-z][a-z-]*\*\*$' |
		tr -d '*'
}

# The per-object pages there are: silo-OBJ.8.rst -> OBJ.
man_object_pages() {
	local f
	for f in "$MAN"/silo-*.8.rst; do
		[[ -e $f ]] || continue
		f=${f##*/silo-}
		echo "${f%.8.rst}"
	done
}

# man_usage OBJ: the "silo OBJ CMD ..." lines of silo-OBJ.8's COMMANDS and
# the option items under them, as usage_cmds and usage_opts (tests/lib.sh)
# read help.
man_usage() {
	[[ -f $MAN/silo-$1.8.rst ]] || return 0
	rst_section "$MAN/silo-$1.8.rst" COMMANDS |
		grep -E '^(\*\*silo |  +\*\*-)' | rst_plain | sed 's/^ *//'
}

# man_synopsis_cmds OBJ: the words of silo-OBJ.8's "COMMAND := { ... }".
man_synopsis_cmds() {
	[[ -f $MAN/silo-$1.8.rst ]] || return 0
	rst_section "$MAN/silo-$1.8.rst" SYNOPSIS | tr '\n' ' ' | rst_plain |
		sed -n 's/.*COMMAND := {\([^}]*\)}.*/\1/p' | tr -d '|'
}

# Option items ("**-j**, **--json**") of a section, short and long.
item_opts() {
	grep -E '^\*\*-' | rst_plain | grep -oE -- '(^|[ ,])--?[a-zA-Z][a-z-]*' |
		tr -d ' ,'
}

# --- silo.8 and silo-OBJECT.8 -------------------------------------------
S8="docs/man/silo.8.rst"
objects=$(help_objects)
man_objects=$(man_object_items)
syn_objects=$(rst_section "$MAN/silo.8.rst" SYNOPSIS | tr '\n' ' ' | rst_plain |
	sed -n 's/.*OBJECT := {\([^}]*\)}.*/\1/p' | tr -d '|')
[[ $objects == *xdp* && $man_objects == *xdp* ]] &&
	ok "silo.8: objects found" ||
	not_ok "silo.8: objects found" "help: '$objects', $S8: '$man_objects'"
agree "silo.8: objects" "'silo --help'" "$objects" "$S8 OBJECTS" "$man_objects"
agree "silo.8: SYNOPSIS objects" "'silo --help'" "$objects" "$S8 SYNOPSIS" \
	"$syn_objects"
agree "silo.8: objects vs completion" "completion/silo" \
	"$(complete_line 'silo ' | grep -vx help)" "$S8" "$man_objects"
man_global=$(rst_section "$MAN/silo.8.rst" "Global options" | item_opts)
agree "silo.8: global options" "'silo --help'" "$(help_global_opts)" \
	"$S8 Global options" "$man_global"
agree "silo.8: global options vs completion" "completion/silo" \
	"$(complete_line 'silo -')" "$S8 Global options" "$man_global"

# A page per object ('silo version' takes nothing: silo.8 says it), each
# named in silo.8's SEE ALSO.
paged=$(tr ' ' '\n' <<<"$objects" | grep -vx -e version -e '')
agree "silo.8: a page per object" "'silo --help'" "$paged" \
	"docs/man/silo-*.8.rst" "$(man_object_pages)"
agree "silo.8: SEE ALSO names each object's page" "'silo --help'" "$paged" \
	"$S8 SEE ALSO" "$(rst_section "$MAN/silo.8.rst" "SEE ALSO" | rst_plain |
		grep -oE 'silo-[a-z][a-z-]*\(8\)' | sed 's/^silo-//; s/(8)$//')"

strip_common() { tr ' ' '\n' | grep -vxE -- '-j|--json|-p|--pretty|-h|--help'; }
usage=$(help_usage xdp)
[[ $(usage_opts xdp load <<<"$usage") == *--forward* &&
	$(usage_opts xdp load <<<"$(man_usage xdp)") == *--forward* ]] &&
	ok "silo-xdp.8: options found" ||
	not_ok "silo-xdp.8: options found" \
		"no --forward for xdp load in help or docs/man/silo-xdp.8.rst"
# shellcheck disable=SC2013 # words: names hold no spaces
for obj in $(sort -u <<<"$(tr ' ' '\n' <<<"$objects $man_objects")"); do
	[[ $obj == version ]] && continue # 'silo version' takes nothing
	P="silo-$obj.8"
	PS="docs/man/$P.rst COMMANDS"
	usage=$(help_usage "$obj" 2>/dev/null)
	musage=$(man_usage "$obj")
	cmds=$(usage_cmds "$obj" <<<"$usage")
	mcmds=$(usage_cmds "$obj" <<<"$musage")
	if [[ -z $cmds && -z $mcmds ]]; then # silo doctor [DEV] [--root DIR]
		agree "$P: $obj options" "'silo $obj help'" \
			"$(grep -oE -- '--[a-z][a-z-]*' <<<"$usage")" "$PS" \
			"$(grep -oE -- '--[a-z][a-z-]*' <<<"$musage")"
		agree "$P: $obj options vs completion" "completion/silo" \
			"$(complete_line "silo $obj -" | strip_common)" "$PS" \
			"$(grep -oE -- '--[a-z][a-z-]*' <<<"$musage")"
		continue
	fi
	agree "$P: $obj commands" "'silo $obj help'" "$cmds" "$PS" "$mcmds"
	agree "$P: $obj commands vs completion" "completion/silo" \
		"$(complete_line "silo $obj " | grep -vx help)" "$PS" "$mcmds"
	agree "$P: SYNOPSIS commands" "'silo $obj help'" "$cmds" \
		"docs/man/$P.rst SYNOPSIS" "$(man_synopsis_cmds "$obj" |
			tr ' ' '\n' | grep -vx help)"
	# shellcheck disable=SC2013 # words: names hold no spaces
	for cmd in $(sort -u <<<"$(tr ' ' '\n' <<<"$cmds $mcmds")"); do
		mopts=$(usage_opts "$obj" "$cmd" <<<"$musage")
		agree "$P: $obj $cmd options" "'silo $obj help'" \
			"$(usage_opts "$obj" "$cmd" <<<"$usage")" "$PS $cmd" "$mopts"
		agree "$P: $obj $cmd options vs completion" "completion/silo" \
			"$(complete_line "silo $obj $cmd -" | strip_common)" \
			"$PS $cmd" "$mopts"
	done
done

# --- silod.8 --------------------------------------------------------------
help_silod=$("$SILOD" --help | grep -E '^ +-' |
	grep -oE -- '(^|[ ,])--?[a-zA-Z][a-z-]*' | tr -d ' ,')
man_silod=$(rst_section "$MAN/silod.8.rst" OPTIONS | item_opts)
[[ $help_silod == *--netns* && $man_silod == *--netns* ]] &&
	ok "silod.8: options found" ||
	not_ok "silod.8: options found" "help: '$help_silod' man: '$man_silod'"
agree "silod.8: options" "'silod --help'" "$help_silod" \
	"docs/man/silod.8.rst OPTIONS" "$man_silod"

# --- silod.conf.5 ---------------------------------------------------------
# A key silod knows fails on its empty value or on the next line, which is
# no setting; one it does not know says "unknown setting". silod stops at
# the configuration, before any work.
accepts_key() { # KEY
	printf '%s =\nnot a setting\n' "$1" >"$TMP/probe.conf"
	timeout 10 "$SILOD" --pin-root "$PIN_ROOT" --config "$TMP/probe.conf" \
		>"$TMP/probe.out" 2>&1
	[[ $? == 2 ]] && ! grep -q 'unknown setting' "$TMP/probe.out"
}
if accepts_key no-such-key; then
	not_ok "silod.conf.5: unknown keys are refused" "$(head -c 300 "$TMP/probe.out")"
else
	ok "silod.conf.5: unknown keys are refused"
fi
# The keys silod accepts: the shipped example's, the options that are
# also keys, and the names the parser compares keys with.
keys=$(grep -oE '^#? *[a-z][a-z-]* *=' "$TESTS_DIR"/../dist/silod.conf |
	tr -d '# ='
grep -ohE 'strcmp\(key, "[a-z][a-z-]*"\)' "$TESTS_DIR"/../user/silod/*.c |
	grep -oE '"[^"]+"' | tr -d '"'
for o in $help_silod; do
	[[ $o == --* ]] && accepts_key "${o#--}" && echo "${o#--}"
done)
man_keys=$(rst_section "$MAN/silod.conf.5.rst" OPTIONS |
	grep -oE '^\*\*[a-z][a-z-]*\*\* *=' | tr -d '*= ')
refused=
for k in $man_keys; do
	accepts_key "$k" || refused+="$k "
done
[[ -z $refused ]] && ok "silod.conf.5: silod accepts every key" ||
	not_ok "silod.conf.5: silod accepts every key" "it refuses: $refused"
[[ $keys == *heartbeat-ms* && $man_keys == *heartbeat-ms* ]] &&
	ok "silod.conf.5: keys found" ||
	not_ok "silod.conf.5: keys found" "silod: '$keys' man: '$man_keys'"
agree "silod.conf.5: keys" "silod's keys" "$keys" \
	"docs/man/silod.conf.5.rst OPTIONS" "$man_keys"

# --- libsilo.3 ------------------------------------------------------------
declared=$(grep -hoE '\bsilo_[a-z0-9_]+[[:space:]]*\(' \
	"$TESTS_DIR/../include/silo/silo.h" \
	"$TESTS_DIR/../include/silo/apply.h" \
	"$TESTS_DIR/../include/silo/envelope.h" | tr -d ' \t(')
documented=$(sed -n '/^OPTIONS$/,/^EXIT STATUS$/p' "$MAN/libsilo.3.rst" |
	grep -E '^\*\*' | rst_plain | grep -oE '\bsilo_[a-z0-9_]+\(' | tr -d '(')
[[ -n $declared ]] && ok "libsilo.3: functions found" ||
	not_ok "libsilo.3: functions found" "none in silo.h"
agree "libsilo.3: functions" "include/silo/silo.h" "$declared" \
	"docs/man/libsilo.3.rst OPTIONS" "$documented"

# --- every page -----------------------------------------------------------
sections=(NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" FILES EXAMPLES
	"SEE ALSO")
for src in "$MAN"/*.rst; do
	page=$(basename "$src" .rst)
	built="$BUILD/man/$page"
	if [[ ! -f $built ]]; then
		echo "skip - $page renders: not built (no rst2man: apt-get install python3-docutils)"
		continue
	fi
	missing=()
	for s in "${sections[@]}"; do
		grep -qE "^\.SH \"?$s\"?\$" "$built" || missing+=("$s")
	done
	((${#missing[@]} == 0)) && ok "$page: every section" ||
		not_ok "$page: every section" "missing: ${missing[*]}"
	if command -v groff >/dev/null; then
		out=$(groff -man -Tutf8 -ww -z "$built" 2>&1)
	elif command -v man >/dev/null; then
		out=$(man --warnings -l "$built" 2>&1 >/dev/null)
	else
		echo "skip - $page renders: neither groff nor man"
		continue
	fi
	[[ -z $out ]] && ok "$page renders without warnings" ||
		not_ok "$page renders without warnings" "$(head -c 300 <<<"$out")"
done
