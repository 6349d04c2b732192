#include "cli/lesson_runs.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/grow.h"

/* Output beyond this is not what a lesson's command prints. */
#define RUN_MAX_OUTPUT (16u << 20)

/* One distinct run: its command and core type, and once run its output. */
typedef struct {
	char **argv;         /* NULL-terminated copy */
	char *core;          /* NULL: the environment's */
	char *out;           /* NULL until run */
	size_t len, cap;
	int status;
	bool done;
	pid_t pid;           /* while running */
	int fd;
} run_entry;

struct lesson_runs {
	run_entry *e;
	size_t n, cap;
};

lesson_runs *lesson_runs_new(void)
{
	return calloc(1, sizeof(lesson_runs));
}

static void free_argv(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

void lesson_runs_free(lesson_runs *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free_argv(r->e[i].argv);
		free(r->e[i].core);
		free(r->e[i].out);
	}
	free(r->e);
	free(r);
}

size_t lesson_runs_count(const lesson_runs *r)
{
	return r->n;
}

static bool same_run(const run_entry *e, char *const *argv, const char *core)
{
	if ((e->core == NULL) != (core == NULL) || (core && strcmp(e->core, core)))
		return false;
	size_t i = 0;
	for (; argv[i] && e->argv[i]; i++)
		if (strcmp(argv[i], e->argv[i]))
			return false;
	return !argv[i] && !e->argv[i];
}

static run_entry *find(lesson_runs *r, char *const *argv, const char *core)
{
	for (size_t i = 0; i < r->n; i++)
		if (same_run(&r->e[i], argv, core))
			return &r->e[i];
	return NULL;
}

/* The entry of (argv, core), added when new; NULL without memory. */
static run_entry *note(lesson_runs *r, char *const *argv, const char *core)
{
	run_entry *e = find(r, argv, core);
	if (e)
		return e;
	if (!grow_one(&r->e, &r->cap, r->n, 64, sizeof *r->e))
		return NULL;
	size_t argc = 0;
	while (argv[argc])
		argc++;
	e = &r->e[r->n];
	memset(e, 0, sizeof *e);
	e->fd = -1;
	e->argv = calloc(argc + 1, sizeof *e->argv);
	bool ok = e->argv != NULL;
	for (size_t i = 0; ok && i < argc; i++)
		ok = (e->argv[i] = strdup(argv[i])) != NULL;
	if (ok && core)
		ok = (e->core = strdup(core)) != NULL;
	if (!ok) {
		free_argv(e->argv);
		free(e->core);
		return NULL;
	}
	r->n++;
	return e;
}

mp_status lesson_runs_record(void *runs, char *const *argv, const char *blas_core, char **out, int *exit_status)
{
	if (!note(runs, argv, blas_core))
		return MP_ENOMEM;
	*exit_status = 0;
	return (*out = strdup("")) != NULL ? MP_OK : MP_ENOMEM;
}

/* Starts e: this program with e's argv (stdin and stderr on /dev/null, at
 * most 15 minutes, OPENBLAS_CORETYPE set to e's core type), its stdout on
 * a pipe; with several runs at a time, each trains in one thread
 * (MIXPREC_THREADS=1: the same bits, no oversubscribed cores). */
static mp_status start(run_entry *e, bool one_thread)
{
	e->cap = 4096;
	if ((e->out = malloc(e->cap)) == NULL)
		return MP_ENOMEM;
	int fd[2];
	if (pipe(fd) != 0)
		return MP_EIO;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return MP_EIO;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);
		if (devnull < 0 || dup2(fd[1], STDOUT_FILENO) < 0 || dup2(devnull, STDIN_FILENO) < 0 ||
		    dup2(devnull, STDERR_FILENO) < 0)
			_exit(127);
		close(fd[0]);
		close(fd[1]);
		if (e->core && setenv("OPENBLAS_CORETYPE", e->core, 1) != 0)
			_exit(127);
		if (one_thread && setenv("MIXPREC_THREADS", "1", 1) != 0)
			_exit(127);
		alarm(900);
		execv("/proc/self/exe", e->argv);
		_exit(127);
	}
	close(fd[1]);
	e->pid = pid;
	e->fd = fd[0];
	return MP_OK;
}

/* Reads what e's pipe has; on end of file reaps the child and marks e
 * done (also when the child cannot be reaped: MP_EIO then, so that no run
 * is waited on forever). Output past RUN_MAX_OUTPUT is read and dropped. */
static mp_status drain(run_entry *e)
{
	if (e->len + 1 == e->cap && e->cap < RUN_MAX_OUTPUT + 1) {
		char *p = realloc(e->out, 2 * e->cap);
		if (p) {
			e->out = p;
			e->cap *= 2;
		}
	}
	char sink[4096];
	bool room = e->len + 1 < e->cap;
	ssize_t got = read(e->fd, room ? e->out + e->len : sink, room ? e->cap - 1 - e->len : sizeof sink);
	if (got < 0 && errno == EINTR)
		return MP_OK;
	if (got > 0) {
		if (room)
			e->len += (size_t)got;
		return MP_OK;
	}
	close(e->fd);
	e->fd = -1;
	e->out[e->len] = '\0';
	int status;
	e->done = true;
	while (waitpid(e->pid, &status, 0) < 0)
		if (errno != EINTR) {
			e->status = 127;
			return MP_EIO;
		}
	e->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return e->status == 127 ? MP_EIO : MP_OK;
}

mp_status lesson_runs_fill(lesson_runs *r, size_t jobs, bool progress)
{
	if (jobs < 1)
		jobs = 1;
	size_t todo = 0, finished = 0;
	for (size_t i = 0; i < r->n; i++)
		todo += !r->e[i].done;
	struct pollfd *pfd = calloc(jobs, sizeof *pfd);
	size_t *who = calloc(jobs, sizeof *who);
	if (!pfd || !who) {
		free(pfd);
		free(who);
		return MP_ENOMEM;
	}
	mp_status st = MP_OK;
	size_t next = 0, running = 0;
	for (;;) {
		while (st == MP_OK && running < jobs && next < r->n) {
			run_entry *e = &r->e[next++];
			if (e->done)
				continue;
			st = start(e, jobs > 1);
			if (st == MP_OK)
				running++;
		}
		if (running == 0)
			break;
		size_t np = 0;
		for (size_t i = 0; i < r->n && np < jobs; i++)
			if (r->e[i].fd >= 0) {
				pfd[np] = (struct pollfd){ .fd = r->e[i].fd, .events = POLLIN };
				who[np++] = i;
			}
		if (poll(pfd, np, -1) < 0) {
			if (errno == EINTR)
				continue;
			st = MP_EIO;
			break;
		}
		for (size_t k = 0; k < np; k++) {
			if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			run_entry *e = &r->e[who[k]];
			mp_status ds = drain(e);
			if (st == MP_OK)
				st = ds;
			if (e->done) {
				running--;
				finished++;
				if (progress)
					fprintf(stderr, "\rlesson check: %zu of %zu runs done", finished, todo);
			}
		}
	}
	if (progress && todo)
		fputc('\n', stderr);
	free(pfd);
	free(who);
	return st;
}

mp_status lesson_runs_lookup(void *runs, char *const *argv, const char *blas_core, char **out, int *exit_status)
{
	lesson_runs *r = runs;
	run_entry *e = note(r, argv, blas_core);
	if (!e)
		return MP_ENOMEM;
	if (!e->done) {
		mp_status st = lesson_runs_fill(r, 1, false);
		if (st != MP_OK)
			return st;
		e = find(r, argv, blas_core);
	}
	*exit_status = e->status;
	return (*out = strdup(e->out ? e->out : "")) != NULL ? MP_OK : MP_ENOMEM;
}
