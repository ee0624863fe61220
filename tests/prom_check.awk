# SPDX-License-Identifier: GPL-2.0
# A strict reader of the Prometheus text exposition format 0.0.4, for
# tests/metrics.sh (promtool is not installed). Every line is "# HELP NAME
# TEXT", "# TYPE NAME counter|gauge" or a sample "NAME{LABEL="VALUE",...}
# NUMBER"; a family's TYPE comes before its samples, once, and its lines
# are together; a counter's name ends in _total; no series twice. Prints
# each problem with its line number and exits 1 when there is one; else
# prints the number of samples.
function bad(why) {
	printf "line %d: %s: %s\n", NR, why, $0
	errors++
}

function family_seen(name) {
	# A family's lines are together: one seen before cannot come back.
	if (name != current && (name in closed))
		bad("family " name " continues after another began")
	if (name != current && current != "")
		closed[current] = 1
	current = name
}

BEGIN {
	name_re = "^[a-zA-Z_:][a-zA-Z0-9_:]*"
	label_re = "^[a-zA-Z_][a-zA-Z0-9_]*"
	# A Go ParseFloat number, as Prometheus reads one.
	num_re = "^[-+]?(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][-+]?[0-9]+)?|Inf|NaN)$"
	errors = 0
	samples = 0
}

/^#/ {
	if ($0 ~ /^# HELP /) {
		rest = substr($0, 8)
		if (!match(rest, name_re) || (RLENGTH < length(rest) && substr(rest, RLENGTH + 1, 1) != " ")) {
			bad("bad HELP name")
			next
		}
		name = substr(rest, 1, RLENGTH)
		text = substr(rest, RLENGTH + 2)
		# Only \\ and \n are escapes in HELP text.
		t = text
		gsub(/\\\\/, "", t)
		gsub(/\\n/, "", t)
		if (t ~ /\\/)
			bad("bad escape in HELP")
		if (name in help)
			bad("second HELP for " name)
		help[name] = 1
		family_seen(name)
		next
	}
	if ($0 ~ /^# TYPE /) {
		n = split(substr($0, 8), f, " ")
		if (n != 2 || f[1] !~ (name_re "$") || f[2] !~ /^(counter|gauge)$/) {
			bad("bad TYPE line")
			next
		}
		if (f[1] in type)
			bad("second TYPE for " f[1])
		if (f[1] in sampled)
			bad("TYPE for " f[1] " after its samples")
		if (f[2] == "counter" && f[1] !~ /_total$/)
			bad("counter " f[1] " does not end in _total")
		type[f[1]] = f[2]
		family_seen(f[1])
		next
	}
	bad("a comment other than HELP or TYPE")
	next
}

{
	line = $0
	if (!match(line, name_re)) {
		bad("no metric name")
		next
	}
	name = substr(line, 1, RLENGTH)
	line = substr(line, RLENGTH + 1)
	labels = ""
	if (substr(line, 1, 1) == "{") {
		line = substr(line, 2)
		delete seen_label
		while (substr(line, 1, 1) != "}") {
			if (!match(line, label_re)) {
				bad("bad label name")
				next
			}
			lname = substr(line, 1, RLENGTH)
			line = substr(line, RLENGTH + 1)
			if (substr(line, 1, 2) != "=\"") {
				bad("label " lname " without =\"")
				next
			}
			line = substr(line, 3)
			# The value: up to an unescaped quote; only \\, \" and \n.
			value = ""
			while (1) {
				c = substr(line, 1, 1)
				if (c == "") {
					bad("unterminated label value")
					next
				}
				if (c == "\"")
					break
				if (c == "\\") {
					e = substr(line, 2, 1)
					if (e != "\\" && e != "\"" && e != "n") {
						bad("bad escape in label value")
						next
					}
					value = value c e
					line = substr(line, 3)
					continue
				}
				value = value c
				line = substr(line, 2)
			}
			line = substr(line, 2)
			if (lname in seen_label) {
				bad("label " lname " twice")
				next
			}
			seen_label[lname] = 1
			# Sorted by name below: the same series whatever the order.
			labels = labels (labels == "" ? "" : "\001") lname "=" value
			c = substr(line, 1, 1)
			if (c == ",")
				line = substr(line, 2)
			else if (c != "}") {
				bad("label list broken")
				next
			}
		}
		line = substr(line, 2)
	}
	if (substr(line, 1, 1) != " ") {
		bad("no space before the value")
		next
	}
	n = split(substr(line, 2), f, " ")
	# A value, and optionally a timestamp (an integer).
	if (n < 1 || n > 2 || f[1] !~ num_re || (n == 2 && f[2] !~ /^-?[0-9]+$/)) {
		bad("bad value")
		next
	}
	if (!(name in type)) {
		bad("sample of " name " before its TYPE")
		next
	}
	family_seen(name)
	# Canonical series: the labels sorted.
	nl = split(labels, parts, "\001")
	for (i = 2; i <= nl; i++)
		for (j = i; j > 1 && parts[j - 1] > parts[j]; j--) {
			t = parts[j]
			parts[j] = parts[j - 1]
			parts[j - 1] = t
		}
	key = name
	for (i = 1; i <= nl; i++)
		key = key "\001" parts[i]
	if (key in series)
		bad("series twice")
	series[key] = 1
	sampled[name] = 1
	samples++
}

END {
	for (t in type)
		if (!(t in sampled))
			missing = missing " " t
	if (errors) {
		printf "%d problems\n", errors
		exit 1
	}
	if (samples == 0) {
		print "no samples"
		exit 1
	}
	print samples " samples"
	if (missing != "")
		print "families without samples:" missing
}
