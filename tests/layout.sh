# SPDX-License-Identifier: GPL-2.0
# make lint's layout check (tools/lint/layout.py) on small trees of its
# own: the .c files of a folder that call each other's functions or use
# each other's global variables make a circle, in user/ as in tools/; two
# programs of one folder (each with a main()) do not.
. "$TESTS_DIR/lib.sh"

trap 'rm -rf "$TMP"' EXIT
LAYOUT="$TESTS_DIR/../tools/lint/layout.py"

# A tree of its own, in git (the check reads git's files): FOLDER, then
# pairs of file name and text.
tree() {
	local d="$TMP/t" folder=$1
	shift
	rm -rf "$d" && mkdir -p "$d/tools/lint" "$d/$folder" || return 1
	: >"$d/tools/lint/layout.allow"
	while (($#)); do
		printf '%s\n' "$2" >"$d/$folder/$1"
		shift 2
	done
	git -C "$d" init -q && git -C "$d" add -A
}

# The check's findings for the tree, one a line.
findings() { python3 "$LAYOUT" "$TMP/t" | grep '^layout: circle' || true; }

expect() {
	local name=$1 want=$2 got
	got=$(findings)
	[[ $got == "$want" ]] && ok "$name" || not_ok "$name" "got '$got', want '$want'"
}

tree user/x a.c $'int f(void)\n{\n\treturn g();\n}' \
	b.c $'int g(void)\n{\n\treturn f();\n}'
expect "two files calling each other" "layout: circle user/x a.c b.c"

tree user/x a.c $'int n = 1;\nint f(void)\n{\n\treturn 0;\n}' \
	b.c $'int g(void)\n{\n\treturn n + f();\n}'
expect "one way: b calls a and reads its global" ""

tree tools/y a.c $'struct s S = { 0 };\nint f(void)\n{\n\treturn g();\n}' \
	b.c $'int g(void)\n{\n\treturn S.x;\n}'
expect "a call one way, a global the other, in tools/" "layout: circle tools/y a.c b.c"

tree tools/y a.c $'bool verbose;\nint main(void)\n{\n\treturn L.x;\n}' \
	b.c $'struct s L;\nint main(void)\n{\n\treturn verbose;\n}'
expect "two programs of one folder share names, not code" ""

tree user/x a.c $'/* g() and n: a comment, not a use */\nint f(void)\n{\n\treturn 0;\n}' \
	b.c $'int n;\nint g(void)\n{\n\treturn f();\n}'
expect "a comment is not a use" ""
