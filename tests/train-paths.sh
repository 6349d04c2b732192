#!/bin/sh
# A SIMD path changes speed, never a figure: a training run of every preset
# writes byte-identical CSV rows (every column but ms, the wall time) and
# byte-identical final tensors under MIXPREC_SIMD=avx512, avx2 and portable
# (each path this CPU has) and with 1 and 2 threads. The OpenBLAS core type
# is held fixed (the one chosen here), as the README's reproducibility
# statement says: it is the one part whose bits depend on the machine.
. "${srcdir:-.}/tests/harness.sh"
need_mixprec
make_tmp train-paths
presets=fp32,bf16-mixed,bf16-resid,bf16-resid-sr,bf16-pure,bf16-pure-sr,bf16-pure-kahan,fp16-mixed,fp16-noscale,fp8-mixed,fp8-delayed,fp8-current,fp8-block,mxfp8,nvfp4
# and the switch to bf16 after half the steps (--bf16-from)
presets=$presets,nvfp4+bf16-from=6
shape="--layers 2 --channels 32 --heads 2 --context 32 --batch 4 --steps 12 --eval-every 6 --resid-offset 100"

paths=portable
grep -qw avx2 /proc/cpuinfo 2>/dev/null && paths="$paths avx2"
grep -qw avx512f /proc/cpuinfo 2>/dev/null && paths="$paths avx512"
echo "# paths: $paths; OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"

ref=
for p in $paths; do
	for th in 1 2; do
		run_id=$p-$th
		mkdir "$tmp/$run_id"
		# avx512 is the default where the CPU has it: no cap set
		if [ "$p" = avx512 ]; then
			env -u MIXPREC_SIMD "$MIXPREC" train --policy $presets $shape --threads $th --csv "$tmp/$run_id.csv" \
				--save "$tmp/$run_id/m.safetensors" >"$tmp/$run_id.out" 2>"$tmp/$run_id.err"
		else
			MIXPREC_SIMD=$p "$MIXPREC" train --policy $presets $shape --threads $th --csv "$tmp/$run_id.csv" \
				--save "$tmp/$run_id/m.safetensors" >"$tmp/$run_id.out" 2>"$tmp/$run_id.err"
		fi
		rc=$?
		if [ "$rc" -ne 0 ]; then
			bad "train on the $p path, $th thread(s): exit $rc" "$(head -5 "$tmp/$run_id.err")"
			continue
		fi
		# every column but ms (found by name in the header)
		awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "ms") skip = i }
			{ s = ""; for (i = 1; i <= NF; i++) if (i != skip) s = s $i ","; print s }' \
			"$tmp/$run_id.csv" >"$tmp/$run_id.rows"
		(cd "$tmp/$run_id" && cksum ./*.safetensors) >"$tmp/$run_id.sums"
		if [ -z "$ref" ]; then
			ref=$run_id
			n=$(wc -l <"$tmp/$ref.rows")
			[ "$n" -ge 150 ] && ok "reference run $ref: $n CSV rows" || bad "reference run $ref: $n rows" ""
			continue
		fi
		if cmp -s "$tmp/$ref.rows" "$tmp/$run_id.rows"; then
			ok "$run_id: the CSV rows of $ref, byte for byte"
		else
			bad "$run_id: CSV differs from $ref" "$(diff "$tmp/$ref.rows" "$tmp/$run_id.rows" | head -4)"
		fi
		nfiles=$(wc -l <"$tmp/$ref.sums")
		if cmp -s "$tmp/$ref.sums" "$tmp/$run_id.sums"; then
			ok "$run_id: the final tensors of $ref, byte for byte, $nfiles files"
		else
			bad "$run_id: tensors differ from $ref" "$(diff "$tmp/$ref.sums" "$tmp/$run_id.sums" | head -4)"
		fi
	done
done
finish
