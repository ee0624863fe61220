# SPDX-License-Identifier: GPL-2.0
# The bash completion (completion/silo) and the help name the same objects,
# commands and options: each list read from 'silo --help' and 'silo OBJECT
# help' is compared, both ways, with what the completion offers.
. "$TESTS_DIR/lib.sh"

# same NAME HELP_WORDS COMPLETION_WORDS: equal as sets.
same() {
	local a b
	a=$(tr ' ' '\n' <<<"$2" | grep -v '^$' | sort -u)
	b=$(tr ' ' '\n' <<<"$3" | grep -v '^$' | sort -u)
	if [[ $a == "$b" ]]; then
		ok "$1"
	else
		not_ok "$1" "help: ${a//$'\n'/ } / completion: ${b//$'\n'/ }"
	fi
}

objects=$(help_objects)
same "objects" "$objects help" "$(complete_line 'silo ')"
same "global options" "$(help_global_opts)" "$(complete_line 'silo -')"

common='--json -j --pretty -p --help -h'
for obj in $objects; do
	[[ $obj == version ]] && continue
	usage=$(help_usage "$obj")
	cmds=$(usage_cmds "$obj" <<<"$usage")
	if [[ -z $cmds ]]; then # an object without commands: silo doctor [DEV]
		same "$obj: options" "$(grep -oE -- '--[a-z][a-z-]*' <<<"$usage") $common" \
			"$(complete_line "silo $obj -")"
		continue
	fi
	same "$obj: commands" "$cmds help" "$(complete_line "silo $obj ")"
	for cmd in $cmds; do
		same "$obj $cmd: options" "$(usage_opts "$obj" "$cmd" <<<"$usage") $common" \
			"$(complete_line "silo $obj $cmd -")"
	done
done

# Values: devices of the namespace given with --netns, a policy's choices.
N="${NS}cmp"
ip netns add "$N" && ip -n "$N" link add cmpdev0 type veth peer name cmpdev1 || exit 1
complete_line "silo --netns $N xdp load " | grep -qx cmpdev0 &&
	ok "devices of --netns" || not_ok "devices of --netns" \
	"$(complete_line "silo --netns $N xdp load " | tr '\n' ' ')"
same "reuseport attach --policy" "cpu node queue hash" \
	"$(complete_line 'silo reuseport attach --policy ')"
same "service add --mode" "flow queue node" \
	"$(complete_line 'silo service add --mode ')"
same "xdp load --mode" "native skb" "$(complete_line 'silo xdp load --mode ')"
ip netns del "$N"
