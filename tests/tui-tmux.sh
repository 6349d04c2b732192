#!/bin/sh
# End-to-end TUI tests in a real terminal: a private tmux server
# (tmux -L mixprec-test-PID) at 80x24 and 132x43 runs an interactive shell,
# starts mixprec, reaches every screen with send-keys, reads the screen with
# capture-pane, resizes, quits, and checks that the terminal is restored
# (stty settings as before, alternate screen left, cursor visible) after Q,
# Ctrl-C and SIGTERM; Ctrl-Z and fg redraw; TERM=dumb is refused.
#
# Kills only its own server. Exit 0 pass, 1 fail, 77 skip (no tmux).

. "${srcdir:-.}/tests/harness.sh"
if ! command -v tmux >/dev/null 2>&1; then
	echo "SKIP: tmux is not installed (./run installs it)"
	exit 77
fi
need_mixprec
case $MIXPREC in /*) ;; *) MIXPREC=$(pwd)/$MIXPREC ;; esac

sock=mixprec-test-$$
tm() { tmux -L "$sock" -f /dev/null "$@"; }
cleanup_more() {
	tm kill-server >/dev/null 2>&1
	sleep 0.2
}
make_tmp tmux
bad_more() {
	echo "     screen:"
	tm capture-pane -p -t t 2>/dev/null | sed 's/^/     | /'
}

keys() { tm send-keys -t t "$@"; }
text() { tm send-keys -t t -l "$1"; }

# waitfor REGEX [SECONDS]: until a line of the pane matches (default 10 s)
waitfor() {
	i=0
	limit=$(( ${2:-10} * 20 ))
	while [ $i -lt $limit ]; do
		if tm capture-pane -p -t t | grep -Eq -- "$1"; then
			return 0
		fi
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# check REGEX DESCRIPTION [SECONDS]
check() {
	if waitfor "$1" "${3:-10}"; then
		ok "$size: $2"
	else
		bad "$size: $2" "no line matches /$1/"
	fi
}

# A shell at the given size with a plain prompt; the workbench runs inside it.
start_shell() {
	tm kill-server >/dev/null 2>&1
	# the old server may still be going away: try a few times
	for attempt in 1 2 3; do
		if tm new-session -d -s t -x "$1" -y "$2" \
			"env -i PATH=\"$PATH\" HOME=\"$tmp\" TERM=xterm-256color LC_ALL=C XDG_STATE_HOME=\"$tmp/state\" MIXPREC_SRCDIR=\"${MIXPREC_SRCDIR:-}\" PS1='$ ' HISTFILE=/dev/null bash --norc --noprofile -i" \
			2>/dev/null; then
			tm set-option -t t -g status off >/dev/null
			tm set-window-option -t t -g window-size manual >/dev/null 2>&1
			waitfor '^\$' 10 && return 0
		fi
		tm kill-server >/dev/null 2>&1
		sleep 1
	done
	return 1
}

# The terminal after the program: settings as saved before it, the main
# screen back, the cursor on.
restored() {
	keys "stty -g > $tmp/stty.after; echo STTY-\"\"DONE" Enter
	waitfor "^STTY-DONE\$" 5
	if cmp -s "$tmp/stty.before" "$tmp/stty.after"; then
		ok "$size: $1: the terminal settings are as before"
	else
		bad "$size: $1: the terminal settings are as before" "before $(cat "$tmp/stty.before")" "after  $(cat "$tmp/stty.after")"
	fi
	alt=$(tm display-message -p -t t '#{alternate_on}')
	cur=$(tm display-message -p -t t '#{cursor_flag}')
	if [ "$alt" = 0 ] && [ "$cur" != 0 ]; then
		ok "$size: $1: back on the main screen, cursor visible"
	else
		bad "$size: $1: back on the main screen, cursor visible" "alternate_on=$alt cursor_flag=$cur"
	fi
	keys clear Enter
}

for size in 80x24 132x43; do
	w=${size%x*}
	h=${size#*x}
	if ! start_shell "$w" "$h"; then
		bad "$size: a tmux session starts"
		continue
	fi
	keys "cd $tmp && stty -g > $tmp/stty.before && $MIXPREC; echo EXIT=\$?" Enter
	check '^ mixprec \| Home' "mixprec alone starts the workbench on Home"
	check 'Lessons' "Home lists the lessons"

	keys '?'
	check 'Keys: Home' "? opens the help of the current screen"
	keys Escape
	waitfor 'Keys: Home' 1 && sleep 0.2

	# a lesson (the first: lessons/ORDER puts mixed-precision first)
	keys Enter
	check 'section 1/11' "Enter opens the mixed-precision lesson"
	keys q

	# an exercise, answered wrongly, then rightly: 7.4d, 0.1 in fp16 is 0x2e66
	# (eight lessons, then All exercises)
	keys j j j j j j j j Enter
	check 'Home > Exercises' "the Exercises list opens"
	check '\] round\.1 ' "it lists the exercises once loaded" 120
	keys j j j j j Enter
	check '^ 7\.4d ' "exercise 7.4d opens"
	text 0x2e67
	keys Enter
	check '^ > fp16_bits +0x2e67\.* x wrong ' "a wrong answer: its verdict"
	keys e C-u
	text 0x2e66
	keys Enter
	check '^   fp16_bits +0x2e66\.* \* right ' "then the right one: its verdict"
	keys q q

	# the Bit explorer: 600 in bf16 is 0x4416; its last bit toggled: 0x4417 = 604
	keys j Enter
	check 'Home > Bit explorer' "the Bit explorer opens"
	keys e C-u
	text 600
	keys Enter
	check '^ bf16 .* 0x4416 ' "600 in bf16 is 0x4416"
	keys j j j
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do keys l; done
	keys Space
	check '^>bf16 .* 0x4417 ' "toggling bf16's last bit gives 0x4417"
	check '= 604 ' "... and the value changes to 604"
	keys q

	# the Hand-rounding lab: the first step of 0.1 to fp16, e = -4
	keys j Enter
	check 'Home > Hand-rounding lab' "the Hand-rounding lab opens"
	keys -- -
	text 4
	keys Enter
	check 'fp16_exponent +-4\.* \* right ' "its first step is checked"
	check '^ > fp16_exp_field ' "and the next step appears"
	keys q

	# the Drift lab
	keys j Enter
	check 'Home > Drift lab' "the Drift lab opens"
	keys s
	check 'done after 10000 of 10000 steps' "the simulation runs to the end" 60
	check 'fp16-rne +600 ' "the table has every variant"
	keys q

	# the Training lab: a short run at the tiny shape fills table and plot
	keys j Enter
	check 'Home > Training lab' "the Training lab opens"
	keys j Space n C-u
	text 8
	keys Enter s
	check 'done after 8 of 8 steps' "a short training runs in the background" 120
	check '^\*fp32 +[0-9]+\.[0-9]{4} ' "the table fills for fp32"
	check '^\*bf16-mixed +[0-9]+\.[0-9]{4} ' "the table fills for bf16-mixed"
	check '^ +(\||[0-9.]+\+).*[*+]' "the loss plot fills"
	# pause answers while training runs
	keys n C-u
	text 100000
	keys Enter s
	check 'training: step' "a long run starts" 60
	t0=$(date +%s%N)
	keys p
	if waitfor 'PAUSED' 5; then
		t1=$(date +%s%N)
		ok "$size: p pauses a running training (seen after $(( (t1 - t0) / 1000000 )) ms, tmux polling included)"
	else
		bad "$size: p pauses a running training"
	fi
	keys x
	check 'stopped after' "x stops it"
	keys q

	# the Memory budget and Loss-scaling labs
	keys j Enter
	check 'Home > Memory budget lab' "the Memory budget lab opens"
	check '^ total ' "with a total"
	keys q j Enter
	check 'Home > Loss-scaling lab' "the Loss-scaling lab opens"
	check 'underflow to 0: ' "the shares at S appear after its run" 60
	keys q

	# the Block explorer: a tiny GPT row in MXFP4, then the ceil rule
	keys j Enter
	check 'Home > Block explorer' "the Block explorer opens"
	check 'tiny GPT \(seed 1\): wte row 0' "with a row of the tiny GPT's weights"
	keys r
	check 'rule < ceil >' "r switches the scale rule"
	keys q

	# too small, then back
	tm resize-window -t t -x 60 -y 20 >/dev/null 2>&1
	check 'Enlarge the terminal' "below 80x24: the enlarge message"
	tm resize-window -t t -x "$w" -y "$h" >/dev/null 2>&1
	check '^ mixprec \| Home' "resized back: Home again"

	# Ctrl-Z and fg: stopped, then redrawn
	keys C-z
	check 'Stopped|stopped' "Ctrl-Z suspends to the shell"
	keys clear Enter fg Enter
	check '^ mixprec \| Home' "fg redraws the workbench"

	keys Q
	check '^\$ *$' "Q returns to the shell"
	keys 'echo EXIT=$?' Enter
	check '^EXIT=0$' "Q quits with status 0"
	restored "after Q"

	# Ctrl-C
	keys "stty -g > $tmp/stty.before && $MIXPREC; echo EXIT=\$?" Enter
	check '^ mixprec \| Home' "started again"
	keys C-c
	check '^EXIT=130$' "Ctrl-C leaves with 128 + SIGINT"
	restored "after Ctrl-C"

	# SIGTERM from outside, while the Training lab trains
	rm -f "$tmp/pid"
	keys "stty -g > $tmp/stty.before && sh -c 'echo \$\$ > $tmp/pid; exec $MIXPREC tui --start train'; echo EXIT=\$?" Enter
	check 'Home > Training lab' "started on the Training lab"
	keys n C-u
	text 100000
	keys Enter s
	check 'training: step' "training runs" 60
	# the process the shell started, by the id it wrote (exec keeps it)
	[ -s "$tmp/pid" ] && kill -TERM "$(cat "$tmp/pid")"
	check '^EXIT=143$' "SIGTERM leaves with 128 + SIGTERM"
	restored "after SIGTERM"

	# a crash (SIGSEGV, here sent from outside while a worker trains) restores
	# the terminal from the signal handler before the default action
	rm -f "$tmp/pid"
	keys "stty -g > $tmp/stty.before && sh -c 'ulimit -c 0; echo \$\$ > $tmp/pid; exec $MIXPREC tui --start train'; echo EXIT=\$?" Enter
	check 'Home > Training lab' "started on the Training lab again"
	keys n C-u
	text 100000
	keys Enter s
	check 'training: step' "training runs" 60
	[ -s "$tmp/pid" ] && kill -SEGV "$(cat "$tmp/pid")"
	check '^EXIT=139$' "SIGSEGV: the default action still happens (128 + 11)"
	check 'crashed; the terminal has been restored' "SIGSEGV: says the terminal was restored"
	restored "after SIGSEGV"

	# TERM=dumb
	keys "TERM=dumb $MIXPREC; echo EXIT=\$?" Enter
	check "TERM is dumb" "TERM=dumb: a clear message"
	check '^EXIT=2$' "TERM=dumb: exit 2"
done

finish
