# SPDX-License-Identifier: GPL-2.0
#
# count-tap.awk: count the TAP that scripts/run-tests printed, per program
# between "# d3dq-run: BEGIN/END" markers (scripts/check,
# scripts/check-packages). "ok" passes, "not ok" fails, either with
# "# SKIP" skips. A program fails once more when it ended early (fewer
# results than its plan), reported nothing, or exited non-zero without a
# failed case; a program listed in the file named by -v expected=FILE that
# never reported fails. Last line: "COUNTS <passed> <failed> <skipped>".
function finish(name, status,    n) {
	n = np + nf + ns
	if (plan > n) {
		print "not ok " name ": ended after " n " of " plan " test cases"
		nf += plan - n
	} else if (n == 0) {
		print "not ok " name ": no test case ran"
		nf++
	} else if (status != 0 && nf == 0) {
		print "not ok " name ": exited with status " status " without a failed test case"
		nf++
	}
	P += np; F += nf; S += ns
	cur = ""
}
BEGIN {
	while ((getline l < expected) > 0)
		want[l] = 1
}
{ sub(/\r$/, "") }
/^# d3dq-run: BEGIN / {
	if (cur != "")
		finish(cur, -1)
	cur = $4; np = nf = ns = 0; plan = -1
	next
}
/^# d3dq-run: END / {
	if ($4 == cur) {
		done[cur] = 1
		finish(cur, $6 + 0)
	}
	next
}
cur == "" { next }
/^1\.\.[0-9]+/ && plan < 0 { plan = substr($1, 4) + 0; next }
/^(not )?ok [0-9]/ {
	if ($0 ~ /# [Ss][Kk][Ii][Pp]/)
		ns++
	else if ($1 == "ok")
		np++
	else
		nf++
}
END {
	if (cur != "")
		finish(cur, -1)
	for (w in want)
		if (!(w in done)) {
			print "not ok " w ": no verdict (never ran or never finished)"
			F++
		}
	print "COUNTS " P + 0 " " F + 0 " " S + 0
}
