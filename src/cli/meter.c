#include <time.h>

#include "cli/meter.h"

void meter_init(run_meter *p, bool tty, double every, double now)
{
	p->tty = tty;
	p->every = every > 0 ? every : 0;
	p->next = now + p->every;
}

bool meter_due(run_meter *p, double now)
{
	if (p->tty)
		return true;
	if (now < p->next)
		return false;
	/* from now, not from the missed due time: a slow step gives one line, not a burst */
	p->next = now + p->every;
	return true;
}

double meter_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
