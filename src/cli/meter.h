/* Progress of a long command on stderr. On a terminal one line is rewritten
 * in place after every step; anywhere else (a log file, a pipe, a CI job) a
 * whole line, without carriage returns, at most once per interval, so that
 * a log shows the run is alive without filling up. */
#ifndef MIXPREC_CLI_METER_H
#define MIXPREC_CLI_METER_H

#include <stdbool.h>

typedef struct {
	bool tty;         /* rewrite one line (every step) */
	double every;     /* not a terminal: seconds between lines (0: every step) */
	double next;      /* not a terminal: the time the next line is due */
} run_meter;

/* A meter started at time now (seconds on any monotonic clock: the caller
 * owns the clock, so tests can pass their own). */
void meter_init(run_meter *p, bool tty, double every, double now);

/* Whether to print a line at time now: always on a terminal; otherwise
 * when the interval since the last line (or the start) has passed, which
 * then starts the next interval at now. */
bool meter_due(run_meter *p, double now);

/* Seconds on the monotonic clock. */
double meter_now(void);

#endif
