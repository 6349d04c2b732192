/* The TUI's terminal: opening the real one or a virtual screen for key
 * scripts, and the signals. Handlers only set a flag; a crash restores the
 * terminal with async-signal-safe calls only. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "tui/app_impl.h"


static volatile sig_atomic_t got_stop_signal;
static struct termios saved_tios;
static bool have_tios;
static char restore_seq[256];
static size_t restore_len;

static void on_stop_signal(int sig)
{
	got_stop_signal = sig;
}

static void on_crash(int sig)
{
	if (restore_len)
		(void)!write(STDOUT_FILENO, restore_seq, restore_len);
	if (have_tios)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tios);
	static const char msg[] = "mixprec: crashed; the terminal has been restored\n";
	(void)!write(STDERR_FILENO, msg, sizeof msg - 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void append_cap(const char *cap)
{
	char *s = tigetstr((char *)cap);
	if (!s || s == (char *)-1)
		return;
	size_t n = strlen(s);
	if (restore_len + n < sizeof restore_seq) {
		memcpy(restore_seq + restore_len, s, n);
		restore_len += n;
	}
}

void app_signals_install(bool terminal)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (!terminal)
		return;
	append_cap("sgr0");
	append_cap("cnorm");
	append_cap("rmkx");
	append_cap("rmcup");
	struct sigaction crash = { .sa_handler = on_crash, .sa_flags = SA_RESETHAND };
	sigemptyset(&crash.sa_mask);
	sigaction(SIGSEGV, &crash, NULL);
	sigaction(SIGBUS, &crash, NULL);
	sigaction(SIGFPE, &crash, NULL);
	sigaction(SIGILL, &crash, NULL);
	sigaction(SIGABRT, &crash, NULL);
}

void app_signals_remove(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	signal(SIGFPE, SIG_DFL);
	signal(SIGILL, SIG_DFL);
	signal(SIGABRT, SIG_DFL);
}

int app_stop_signal(void)
{
	return got_stop_signal;
}

/* --- opening the terminal --- */

int app_term_start(tui_app *app, const tui_options *o, SCREEN **scr, FILE **in, FILE **out)
{
	if (o->keys_path) {
		/* off-screen: a terminal description drives a virtual screen whose
		 * output nobody reads */
		*out = fopen("/dev/null", "w");
		*in = fopen("/dev/null", "r");
		if (!*out || !*in) {
			fprintf(stderr, "mixprec tui: cannot open /dev/null: %s\n", strerror(errno));
			return 3;
		}
		*scr = newterm("xterm-256color", *out, *in);
		if (!*scr)
			*scr = newterm("vt100", *out, *in);
		if (!*scr) {
			fprintf(stderr, "mixprec tui: no terminal description for the virtual screen "
			                "(install the Debian package ncurses-base)\n");
			return 3;
		}
		resize_term(o->rows > 0 ? o->rows : 24, o->cols > 0 ? o->cols : 80);
		app->scripted = true;
		return 0;
	}
	const char *term = getenv("TERM");
	if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)) {
		fprintf(stderr, "mixprec: the interactive workbench needs a terminal on standard input and output; "
		                "for scripts use the commands (see 'mixprec --help')\n");
		return 2;
	}
	if (!term || !*term || !strcmp(term, "dumb")) {
		fprintf(stderr, "mixprec: TERM is %s: the interactive workbench needs a terminal that can move "
		                "the cursor; use the commands instead (see 'mixprec --help')\n",
		        term && *term ? "dumb" : "not set");
		return 2;
	}
	have_tios = tcgetattr(STDIN_FILENO, &saved_tios) == 0;
	*scr = newterm(NULL, stdout, stdin);
	if (!*scr) {
		fprintf(stderr, "mixprec: unknown terminal type '%s'; use the commands instead (see 'mixprec --help')\n",
		        term);
		return 2;
	}
	return 0;
}
