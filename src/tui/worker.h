/* A lab's background worker thread, as the drift, training, loss-scaling and
 * memory-budget screens run one: started with a function and its argument,
 * asked to stop, joined once it has finished. Its lock also guards whatever
 * else the screen shares with the worker. */
#ifndef MIXPREC_TUI_WORKER_H
#define MIXPREC_TUI_WORKER_H

#include <pthread.h>
#include <stdbool.h>

typedef struct {
	pthread_mutex_t mu;   /* guards running, stop and the screen's shared fields */
	pthread_cond_t cv;    /* broadcast when the worker is asked to stop */
	bool running;         /* under mu: the worker sets it false as it ends */
	bool stop;            /* under mu: the worker ends soon once it is true */
	pthread_t thread;     /* the UI thread's own */
	bool joinable;        /* the UI thread's own: a thread is left to join */
} tui_worker;

/* Sets w up with no thread. */
void tui_worker_init(tui_worker *w);
/* Stops and joins a thread still there (tui_worker_stop), then frees w's lock. */
void tui_worker_destroy(tui_worker *w);
/* Starts fn(arg) with the UI's signals blocked (tui_thread_start), running
 * set and stop cleared; false when no thread could start (running stays
 * false). Only when no thread is left to join. */
bool tui_worker_start(tui_worker *w, void *(*fn)(void *), void *arg);
/* Asks the worker to stop (stop set, cv broadcast) and joins it; nothing
 * when no thread is left to join. */
void tui_worker_stop(tui_worker *w);
/* Joins the thread when one is left and it has said it is no longer
 * running (the screen's tick saw that); true when it joined one. */
bool tui_worker_join(tui_worker *w);
/* Whether the worker still runs (takes the lock). */
bool tui_worker_running(tui_worker *w);

#endif
