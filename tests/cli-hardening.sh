#!/bin/sh
# CLI hardening tests: files written safely (no links, FIFOs or partial
# writes), bounded input, numbers in options with the real problem named,
# shape aliases, the example lab round trip, and docs that agree with the
# program's output.
#
# Run by Automake's plain test-driver: exit 0 pass, 1 fail, 77 skip.
# $MIXPREC is the binary under test (exported by the harness; default ./mixprec).
#
# Every expected value below is derived by hand (the derivation is in the
# comment next to it) or computed here with awk from the format definitions;
# none is copied from the program's output.

. "${srcdir:-.}/tests/harness.sh"
need_mixprec

LC_ALL=C
NO_COLOR=1
export LC_ALL NO_COLOR

make_tmp hardening
private_state

# ---------------------------------------------------------------------------
echo "# hardening: files written safely, bounded input, options"

H=$tmp/h
mkdir -p "$H"
TINY="--layers 1 --channels 16 --context 8 --batch 2 --heads 2"
printf 'student_id,name\ns1,One\ns2,Two\n' >"$H/r.csv"

# lab new never writes through a link in its folder; it refuses before
# writing anything (a link, a FIFO, a link to a folder alike)
mkdir -p "$H/lab" "$H/out"
echo ORIG >"$H/out/victim"
ln -s ../out/victim "$H/lab/s2.md"
run lab new --roster "$H/r.csv" --out "$H/lab" --course-seed c
usage_error "lab new: a link in the folder" "s2.md" "symbolic link" "nothing written"
[ "$(cat "$H/out/victim")" = ORIG ] && ok "lab new: the link's target is intact" || bad "lab new: the link's target was overwritten"
[ ! -e "$H/lab/s1.md" ] && ok "lab new: no sheet written before refusing" || bad "lab new: s1.md written before the refusal"
rm "$H/lab/s2.md"
mkfifo "$H/lab/s2.txt"
timeout 20 "$MIXPREC" lab new --roster "$H/r.csv" --out "$H/lab" --course-seed c </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
usage_error "lab new: a FIFO in the folder (no hang)" "s2.txt" "not a regular file"
ls "$H/lab" | grep -q 'tmp-' && bad "lab new: FIFO left a temporary file" || ok "lab new: FIFO: no temporary file left"
rm "$H/lab/s2.txt"
ln -s "$H/out" "$H/lab/s2-answers.csv"
run lab new --roster "$H/r.csv" --out "$H/lab" --course-seed c
usage_error "lab new: a link to a folder" "s2-answers.csv"
[ ! -e "$H/lab/s1.md" ] && ok "lab new: link to a folder: nothing written" || bad "lab new: sheets written before the folder link was refused"
rm "$H/lab/s2-answers.csv"
# a stale temporary file of a killed run is removed by the next write of that file
: >"$H/lab/answer-key.csv.tmp-Ab12Cd"
: >"$H/lab/answer-key.csv.tmp-keep"
run lab new --roster "$H/r.csv" --out "$H/lab" --course-seed c
expect_rc "lab new after the refusals" 0
[ ! -e "$H/lab/answer-key.csv.tmp-Ab12Cd" ] && ok "lab new: stale answer-key.csv.tmp-XXXXXX removed" || bad "lab new: stale temporary file kept"
[ -e "$H/lab/answer-key.csv.tmp-keep" ] && ok "lab new: a file outside the pattern is kept" || bad "lab new: removed a file not its own"
# the roster is never an output, by inode (here: the key itself)
cp "$H/lab/answer-key.csv" "$H/key-before"
run lab new --roster "$H/lab/answer-key.csv" --out "$H/lab" --course-seed c
usage_error "lab new --roster DIR/answer-key.csv" "answer-key.csv" "roster"
cmp -s "$H/lab/answer-key.csv" "$H/key-before" && ok "lab new: the roster-key is intact" || bad "lab new: overwrote its roster"

# grade refuses outputs that are inputs, by device and inode
# (where formats tie the key lists both, fp32|fp16: a student gives one)
awk 'NR == 1 { print "student_id,exercise,field,answer"; next } { sub(/\|[^,"]*$/, ""); print }' \
	"$H/lab/answer-key.csv" >"$H/sub.csv"
cp "$H/sub.csv" "$H/sub-before"
ln "$H/sub.csv" "$H/sub-hard.csv"
run grade --roster "$H/r.csv" "$H/sub.csv" --course-seed c --out "$H/sub-hard.csv"
usage_error "grade --out = a submission (hard link)" "--out" "an input"
cmp -s "$H/sub.csv" "$H/sub-before" && ok "grade: the submission is intact" || bad "grade: overwrote a submission"
run grade --roster "$H/r.csv" "$H/sub.csv" --course-seed c --out "$H/g.csv" --summary "$H/./r.csv"
usage_error "grade --summary = the roster" "--summary" "roster"
run grade --roster "$H/r.csv" "$H/sub.csv" --course-seed c --out "$H/g.csv"
expect_rc "grade: the key's own answers are all right" 0

# ids starting with @ are refused with the reason; names become valid UTF-8
printf 'student_id,name\n@x1,At\ns3,\342\202\254 ok \377\376Ba\001d\n' >"$H/r2.csv"
run lab new --roster "$H/r2.csv" --out "$H/lab2" --course-seed c
expect_rc "lab new: an @ id is a skipped row" 2
err_has "lab new: @x1 refused" "'@x1' is not usable"
err_has "lab new: says why" "formula"
[ ! -e "$H/lab2/@x1.md" ] && ok "lab new: no sheet for @x1" || bad "lab new: wrote a sheet for @x1"
printf 'student_id,exercise,field,answer\n' >"$H/empty-sub.csv"
# the roster without its @x1 row: a run with a bad roster row writes no file
sed 2d "$H/r2.csv" >"$H/r2-ok.csv"
run grade --roster "$H/r2-ok.csv" "$H/empty-sub.csv" --course-seed c --out "$H/g2.csv"
# 0xE2 0x82 0xAC is the euro sign (valid); 0xFF, 0xFE are never UTF-8 (each
# becomes ?), 0x01 is a control (a blank, as the sheets show controls)
if grep -q "^s3,€ ok ??Ba d,7.4a," "$H/g2.csv"; then ok "grade: invalid UTF-8 in a name becomes ?, a control a blank"; else bad "grade: name not sanitised" "$(grep '^s3' "$H/g2.csv" | head -1)"; fi

# a header of more than 1024 fields is an error, never skipped
awk 'BEGIN { for (i = 1; i <= 1025; i++) printf "c%d%s", i, i < 1025 ? "," : "\n"; print "student_id"; print "s9" }' >"$H/wide.csv"
run lab new --roster "$H/wide.csv" --out "$H/lab3" --course-seed c
expect_rc "lab new: a 1025-field header" 2
err_has "lab new: 1025-field header named" "more than 1024 fields"
[ ! -e "$H/lab3/s9.md" ] && ok "lab new: the row after a bad header is not taken as the header" || bad "lab new: used the next row as the header"
# a field over 64 KiB is refused while reading (an unclosed quote would
# otherwise be buffered to the end of the file first)
{ printf 'student_id,name\ns1,"'; head -c 200000 /dev/zero | tr '\0' a; } >"$H/long.csv"
run lab new --roster "$H/long.csv" --out "$H/lab4" --course-seed c
err_has "lab new: a 200000-byte field" "longer than 65536 bytes"

# outputs are atomic: a failed write (file size limit, as a full disk)
# leaves the earlier file whole and no temporary file
atomic_check() {
	name=$1
	file=$2
	shift 2
	echo ORIG >"$file"
	(ulimit -f 1; trap '' XFSZ; exec "$MIXPREC" "$@") </dev/null >/dev/null 2>"$tmp/err"
	rc=$?
	expect_rc "$name under a 512-byte limit" 3
	[ "$(cat "$file")" = ORIG ] && ok "$name: the earlier file is intact" || bad "$name: the earlier file was damaged"
	ls "$(dirname "$file")" | grep -q "$(basename "$file").tmp-" && bad "$name: left a temporary file" || ok "$name: no temporary file left"
}
atomic_check "train --csv" "$H/t.csv" train --steps 30 $TINY --csv "$H/t.csv"
atomic_check "drift --csv" "$H/d.csv" drift --csv "$H/d.csv"
"$MIXPREC" drift --csv "$H/d2.csv" >/dev/null 2>&1
if "$MIXPREC" plot "$H/d2.csv" --png "$H/p0.png" >/dev/null 2>&1; then
	atomic_check "plot --png" "$H/p.png" plot "$H/d2.csv" --png "$H/p.png"
	atomic_check "plot --svg" "$H/p.svg" plot "$H/d2.csv" --svg "$H/p.svg"
else
	echo "skip plot --png/--svg atomic checks (built without cairo)"
fi
if [ -c /dev/full ]; then
	run drift --csv /dev/full
	expect_rc "drift --csv /dev/full" 3
	err_has "drift --csv /dev/full: reason" "No space left"
fi
mkfifo "$H/fifo.csv"
timeout 20 "$MIXPREC" drift --csv "$H/fifo.csv" </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc "drift --csv FIFO without a reader: refused, no hang" 3
err_has "drift --csv FIFO: reason" "no process reads"

# bounded input, checked while reading
timeout 20 "$MIXPREC" round --to bf16 </dev/zero >"$tmp/out" 2>"$tmp/err"
rc=$?
usage_error "round < /dev/zero ends" "line 1" "longer than 8192 bytes"
run plot /dev/zero
usage_error "plot /dev/zero" "NUL byte"
{ printf 'x,y\n1,'; head -c 300000 /dev/zero | tr '\0' 7; printf '\n'; } >"$H/bigfield.csv"
run plot "$H/bigfield.csv" --y y
usage_error "plot: a 300000-byte field" "longer than 65536 bytes"
timeout 60 "$MIXPREC" train --steps 1 $TINY --data /dev/zero </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
usage_error "train --data /dev/zero" "larger than 67108864 bytes"
truncate -s 100M "$H/sparse.txt"
run train --steps 1 $TINY --data "$H/sparse.txt"
usage_error "train --data 100 MB" "larger than 67108864 bytes"

# progress: a FIFO is refused without hanging, a failed save exits 3, and
# stale temporary files go with the next save
mkdir -p "$H/state"
mkfifo "$H/state/progress.csv"
MIXPREC_STATEDIR=$H/state timeout 20 "$MIXPREC" check 7.4a fp16_min_normal=2^-14 </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc "check with a FIFO as the progress file" 3
err_has "check: FIFO named" "not a regular file"
rm "$H/state/progress.csv"
: >"$H/state/progress.csv.tmp-Zz9Yy8"
MIXPREC_STATEDIR=$H/state "$MIXPREC" check 7.4a fp16_min_normal=2^-14 </dev/null >"$tmp/out" 2>"$tmp/err"
[ ! -e "$H/state/progress.csv.tmp-Zz9Yy8" ] && ok "check: stale progress.csv.tmp-XXXXXX removed" || bad "check: stale progress temporary kept"
echo file >"$H/notadir"
MIXPREC_STATEDIR=$H/notadir/state "$MIXPREC" check 7.4a fp16_min_normal=2^-14 </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
expect_rc "check: progress cannot be saved" 3
err_has "check: says so" "progress not saved"

# numbers in options: doc/DESIGN.md's syntax, and the real problem named
run gradhist --steps 1 $TINY --scale 2^16
expect_rc "gradhist --scale 2^16" 0
out_has "gradhist --scale 2^16 = 65536" "S = 65536"
run train --steps 1 $TINY --loss-scale static:2^30 --csv -
expect_rc "train --loss-scale static:2^30" 0
# 2^30 = 1073741824, which %.6g shows as 1.07374e+09
out_has "static:2^30 is the scale" ",1.07374e+09,"
run train --steps 1 $TINY --loss-scale static:1e300
usage_error "--loss-scale static:1e300" "out of range" "1e+30"
run train --steps 1 $TINY --policy fp16-mixed --loss-scale dynamic:16777216 --csv -
expect_rc "train --loss-scale dynamic:16777216" 0
# 16777216 = 2^24, the dynamic scaler's first S
out_has "dynamic:2^24 is the first scale" ",1.67772e+07,"
run train --steps 1 $TINY --seed 1.5
usage_error "train --seed 1.5" "--seed" "not a whole number"
run train --steps 2^3 $TINY --csv -
expect_rc "train --steps 2^3" 0
out_lines "train --steps 2^3: header and 8 rows" 9
run budget --params 7e9 --gpus 1e30
usage_error "budget --gpus 1e30" "--gpus" "out of range"
run exercise hint 7.4d 4 --no-progress
usage_error "exercise hint 7.4d 4" "not a hint number" "1 to 3"
run drift --sweep x0=1,,2
usage_error "drift --sweep x0=1,,2" "--sweep" "empty value"

# one set of shape names: train's are canonical, budget's are aliases, both ways
run budget --params 1000 --layers 2 --hidden 8 --heads 2 --seq 4 --micro-batch 3 --csv
cp "$tmp/out" "$H/b1"
run budget --params 1000 --layers 2 --channels 8 --heads 2 --context 4 --batch 3 --csv
expect_rc "budget --channels/--context/--batch" 0
cmp -s "$tmp/out" "$H/b1" && ok "budget: train's names = budget's" || bad "budget: the aliases differ"
run train --steps 1 --layers 1 --hidden 16 --seq 8 --micro-batch 2 --heads 2
expect_rc "train --hidden/--seq/--micro-batch" 0
out_has "train aliases: the same shape" "batch 2 x 8, 1 layers, 2 heads, 16 channels"
run budget --help
out_has "budget --help: --channels" "--channels"
out_has "budget --help: aliases" "aliases"

# --saturate: inf into fp8-e4m3 gives 448 (max finite), labelled saturated
run round inf --to fp8-e4m3 --saturate
expect_rc "round inf --saturate" 0
out_has "round inf --saturate: 448, saturated" "saturated"
out_lacks "round inf --saturate: not exact" "exact"

# data/submission-example.csv is a lab round trip: everyone right
run grade --roster "${srcdir:-.}/data/roster-example.csv" "${srcdir:-.}/data/submission-example.csv" --course-seed fall26 \
	--out "$H/ex-grades.csv"
expect_rc "grade the example submission (course seed fall26)" 0
n=$(awk -F, 'NR > 1' "${srcdir:-.}/data/roster-example.csv" | wc -l | tr -d ' ')
out_has "example: all $n right" "; $n answered everything right"
# and the round trip itself: lab new, answers from the key, grade
run lab new --roster "${srcdir:-.}/data/roster-example.csv" --out "$H/rt" --course-seed fall26
awk 'NR == 1 { print "student_id,exercise,field,answer"; next } { print }' "$H/rt/answer-key.csv" >"$H/rt/sub.csv"
run grade --roster "${srcdir:-.}/data/roster-example.csv" "$H/rt/sub.csv" --course-seed fall26 --out "$H/rt/g.csv"
expect_rc "lab round trip: the key's answers grade right" 0


# the budget footer explains the recipe shown: fp32 + Adam is weights 4 +
# gradients 4 + Adam's m and v 8 = 16 bytes, not bf16-mixed's 20
run budget --params 7e9 --recipe fp32
expect_rc "budget --recipe fp32" 0
out_has "budget fp32 footer: its own recipe" "fp32 with adam:"
out_has "budget fp32 footer: 16 bytes" "= 16 bytes per"
out_lacks "budget fp32 footer: not bf16-mixed's count" "bf16-mixed with Adam"

# docs agree with the output: README's round example, the man SYNOPSIS,
# data/README.md
S=${srcdir:-.}
run round 0.3 --to fp32,fp16,bf16
sed 's/ *$//' "$tmp/out" >"$H/round-out"
awk '/^    \$ mixprec round 0.3 --to fp32,fp16,bf16$/ { n = 4; next } n > 0 { sub(/^    /, ""); print; n-- }' \
	"$S/README.md" >"$H/round-readme"
cmp -s "$H/round-out" "$H/round-readme" && ok "README: the round example is the program's output" \
	|| bad "README: the round example differs" "$(diff "$H/round-readme" "$H/round-out" | head -4)"
syn=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$S/doc/mixprec.1")
echo "$syn" | grep -q '^\.B mixprec lesson$' && ok "man SYNOPSIS: lesson" || bad "man SYNOPSIS lacks lesson"
echo "$syn" | grep -q 'round | drift | train | tui | all' && ok "man SYNOPSIS: bench tui" || bad "man SYNOPSIS lacks bench tui"
echo "$syn" | grep -B1 '^\.B mixprec plot$' | head -1 | grep -q '^\.br$' && ok "man SYNOPSIS: grade and plot on lines of their own" \
	|| bad "man SYNOPSIS runs grade into plot"
grep -q '\.\./' "$S/data/README.md" && bad "data/README.md points outside the repository" || ok "data/README.md stays inside the repository"

# ---------------------------------------------------------------------------
finish
