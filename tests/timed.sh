#!/bin/sh
# The test suite's LOG_COMPILER: runs one test (its command line is the
# arguments) and prints its wall time as the last line of its log, as a TAP
# comment ("# wall time: 12.3 s test-name"), which tests/timing-table.sh
# gathers into the per-test table. The exit status is the test's.
start=$(date +%s.%N)
"$@"
rc=$?
end=$(date +%s.%N)
name=$(eval "echo \${$#}")
echo "# wall time: $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s $name"
exit $rc
