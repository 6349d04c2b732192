/* A lab's background worker thread (src/tui/worker.h). */
#include "tui/app.h"
#include "tui/worker.h"

void tui_worker_init(tui_worker *w)
{
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->running = w->stop = w->joinable = false;
}

void tui_worker_destroy(tui_worker *w)
{
	tui_worker_stop(w);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
}

bool tui_worker_start(tui_worker *w, void *(*fn)(void *), void *arg)
{
	pthread_mutex_lock(&w->mu);
	w->running = true;
	w->stop = false;
	pthread_mutex_unlock(&w->mu);
	if (tui_thread_start(&w->thread, fn, arg) != 0) {
		pthread_mutex_lock(&w->mu);
		w->running = false;
		pthread_mutex_unlock(&w->mu);
		return false;
	}
	w->joinable = true;
	return true;
}

void tui_worker_stop(tui_worker *w)
{
	if (!w->joinable)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	w->joinable = false;
}

bool tui_worker_join(tui_worker *w)
{
	if (!w->joinable || tui_worker_running(w))
		return false;
	pthread_join(w->thread, NULL);
	w->joinable = false;
	return true;
}

bool tui_worker_running(tui_worker *w)
{
	pthread_mutex_lock(&w->mu);
	bool r = w->running;
	pthread_mutex_unlock(&w->mu);
	return r;
}
