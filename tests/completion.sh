# SPDX-License-Identifier: GPL-2.0
# The bash completion (completion/silo) and the help name the same objects,
# commands and options: each list read from 'silo --help' and 'silo OBJECT
# help' is compared, both ways, with what the completion offers.
. "$TESTS_DIR/lib.sh"

COMPLETION="$TESTS_DIR/../completion/silo"

# The completion's words for a command line ending in a word being typed.
complete_line() { # LINE
	bash -c '
		. "$1"
		read -ra COMP_WORDS <<<"$2"
		[[ $2 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_silo
		printf "%s\n" "${COMPREPLY[@]}"
	' _ "$COMPLETION" "$1" | sort -u | grep -v '^$'
}

# same NAME HELP_WORDS COMPLETION_WORDS: equal as sets.
same() {
	local a b
	a=$(tr ' ' '\n' <<<"$2" | grep -v '^$' | sort -u)
	b=$(tr ' ' '\n' <<<"$3" | grep -v '^$' | sort -u)
	if [[ $a == "$b" ]]; then
		ok "$1"
	else
		not_ok "$1" "help: $(echo $a) / completion: $(echo $b)"
	fi
}

help_top=$("$SILO" --help)
objects=$(tr '\n' ' ' <<<"$help_top" | sed -n 's/.*OBJECT := {\([^}]*\)}.*/\1/p' | tr -d '|')
same "objects" "$objects help" "$(complete_line 'silo ')"
global=$(sed -n '/^OPTIONS:/,$p' <<<"$help_top" | grep -oE -- '(^|[ ,])--?[a-zA-Z][a-z-]*' |
	tr -d ' ,')
same "global options" "$global" "$(complete_line 'silo -')"

common='--json -j --pretty -p --help -h'
for obj in $objects; do
	[[ $obj == version ]] && continue
	help=$("$SILO" "$obj" help)
	# The usage lines: "silo OBJ CMD ..." and their continuations.
	usage=$(sed -n '1,/^$/p' <<<"$help" | sed 's/^Usage: *//; s/^ *//')
	cmds=$(grep -oE "^silo $obj \[?[a-z][a-z-]*" <<<"$usage" | awk '{print $3}' | tr -d '[')
	if [[ -z $cmds ]]; then # an object without commands: silo doctor [DEV]
		same "$obj: options" "$(grep -oE -- '--[a-z][a-z-]*' <<<"$usage") $common" \
			"$(complete_line "silo $obj -")"
		continue
	fi
	same "$obj: commands" "$cmds help" "$(complete_line "silo $obj ")"
	for cmd in $cmds; do
		# This command's usage line and the continuations below it.
		opts=$(awk -v c="silo $obj $cmd" -v o="silo $obj " '
			index($0, o) == 1 { on = (index($0, c) == 1 || index($0, "silo " substr(o, 6) "[" ) == 1) }
			on' <<<"$usage" | grep -oE -- '--[a-z][a-z-]*')
		same "$obj $cmd: options" "$opts $common" \
			"$(complete_line "silo $obj $cmd -")"
	done
done

# Values: devices of the namespace given with --netns, a policy's choices.
N="${NS}cmp"
ip netns add "$N" && ip -n "$N" link add cmpdev0 type veth peer name cmpdev1 || exit 1
complete_line "silo --netns $N xdp load " | grep -qx cmpdev0 &&
	ok "devices of --netns" || not_ok "devices of --netns" \
	"$(complete_line "silo --netns $N xdp load " | tr '\n' ' ')"
same "reuseport attach --policy" "cpu node hash" \
	"$(complete_line 'silo reuseport attach --policy ')"
same "service add --mode" "flow queue node" \
	"$(complete_line 'silo service add --mode ')"
same "xdp load --mode" "native skb" "$(complete_line 'silo xdp load --mode ')"
ip netns del "$N"
