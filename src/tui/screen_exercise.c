/* Exercises (src/teach/exercise.h, as `mixprec exercise` and `mixprec
 * check`): the list with progress marks, and one exercise for the student's
 * variant with answer fields (cursor, backspace, history), instant feedback
 * per field, progressive hints and the worked solution. The hand-rounding
 * lab is the same screen in step mode: one field at a time, the next shown
 * once the current one is right. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>

#include "teach/exercise.h"
#include "teach/progress.h"
#include "tui/progcache.h"
#include "tui/screens.h"
#include "util/file.h"

/* The student whose variant is shown ($MIXPREC_STUDENT; unset: the
 * defaults) and the course seed ($MIXPREC_COURSE_SEED, else "0"), as the
 * CLI's --student and --course-seed. */
static const char *student(void)
{
	const char *s = getenv("MIXPREC_STUDENT");
	return s && *s ? s : NULL;
}

static const char *course_seed(void)
{
	return ex_course_seed(NULL);
}

static void progress_item(char *buf, size_t n, const ex_exercise *ex)
{
	if (student())
		snprintf(buf, n, "exercise:%s@%s", ex->id, student());
	else
		snprintf(buf, n, "exercise:%s", ex->id);
}

/* --- every exercise, loaded once in a worker ---
 * Loading solves every listed variant to check it (drift exercises run the
 * simulation), seconds of work: the screen waits for it without blocking. */

static struct {
	pthread_mutex_t mu;
	pthread_t thread;
	bool started, done, joined;
	char dir[4096];
	ex_set set;
	mp_status st;
	char diag[512];
	size_t ndiags;
} store = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void *store_worker(void *arg)
{
	(void)arg;
	ex_set set;
	ex_diags d = { 0 };
	memset(&set, 0, sizeof set);
	mp_status st = ex_load_dir(&set, store.dir, &d);
	pthread_mutex_lock(&store.mu);
	store.set = set;
	store.st = st;
	store.ndiags = d.count;
	if (d.count)
		snprintf(store.diag, sizeof store.diag, "%s", d.msgs[0]);
	store.done = true;
	pthread_mutex_unlock(&store.mu);
	ex_diags_free(&d);
	/* MPFR keeps per-thread caches (constants) that die with the thread */
	mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
	return NULL;
}

static void store_start(tui_screen *s)
{
	if (store.started)
		return;
	snprintf(store.dir, sizeof store.dir, "%s", ex_dir());
	store.started = true;
	if (tui_thread_start(&store.thread, store_worker, NULL) != 0) {
		store.started = false;
		tui_message(s->app, true, "cannot start a worker thread to load the exercises");
	}
}

/* True once the exercises are loaded (the set is then read-only). */
static bool store_ready(void)
{
	if (!store.started)
		return false;
	pthread_mutex_lock(&store.mu);
	bool done = store.done;
	pthread_mutex_unlock(&store.mu);
	if (done && !store.joined) {
		pthread_join(store.thread, NULL);
		store.joined = true;
	}
	return done;
}

bool tui_exercises_busy(void)
{
	return store.started && !store_ready();
}

void tui_exercise_open(tui_screen *s, const char *id)
{
	store_start(s);
	if (!store_ready()) {
		tui_message(s->app, false, "loading the exercises in the background: press the key again in a moment");
		return;
	}
	char name[] = "exercise";
	char *args[] = { name, (char *)id, NULL };
	tui_push_named(s->app, "exercise", 2, args);
}

void tui_exercises_release(void)
{
	if (!store.started)
		return;
	if (!store.joined)
		pthread_join(store.thread, NULL);
	ex_set_free(&store.set);
	store.started = store.done = store.joined = false;
}

/* --- the list --- */

#define EXLIST_KEYS(X)                                                  \
	X(EL_UP, "k Up", "previous exercise", 'k', FK(KEY_UP))           \
	X(EL_DOWN, "j Down", "next exercise", 'j', FK(KEY_DOWN))         \
	X(EL_OPEN, "Enter l", "open the exercise", TUI_ENTER_KEYS, 'l')
TUI_KEYMAP(exlist, EXLIST_KEYS);

typedef struct {
	int sel, top;
	bool ready, reported;
} exlist;

static mp_status exlist_init(tui_screen *s, int argc, char **argv)
{
	(void)argc, (void)argv;
	store_start(s);
	return MP_OK;
}

static bool exlist_tick(tui_screen *s)
{
	exlist *l = s->priv;
	if (l->ready || !store_ready())
		return false;
	l->ready = true;
	if (store.ndiags)
		tui_message(s->app, true, "%s%s", store.diag, store.ndiags > 1 ? " (and more: mixprec exercise lint)" : "");
	else if (store.st != MP_OK)
		tui_message(s->app, true, "cannot read the exercises in %s", store.dir);
	return true;
}

static bool exlist_busy(tui_screen *s)
{
	(void)s;
	return tui_exercises_busy();
}

static void exlist_draw(tui_screen *s, WINDOW *w, int rows, int cols)
{
	exlist *l = s->priv;
	if (!l->ready) {
		tui_put(w, 1, 2, cols - 4, ROLE_EMPH, "Loading the exercises (every variant is solved once to check it) ...");
		return;
	}
	const ex_set *set = &store.set;
	const progress *prog = progcache_get();   /* re-read only when the file changed */
	tui_putf(w, 0, 1, cols - 2, ROLE_DIM, "%zu exercises, variant of %s%s (course seed %s)", set->count,
	         student() ? "student " : "", student() ? student() : "the defaults", course_seed());
	int visible = rows - 3;
	if (l->sel < l->top)
		l->top = l->sel;
	if (l->sel >= l->top + visible)
		l->top = l->sel - visible + 1;
	for (int i = 0; i < visible && l->top + i < (int)set->count; i++) {
		const ex_exercise *ex = &set->items[l->top + i];
		char item[PROGRESS_ITEM_MAX + 64];
		progress_item(item, sizeof item, ex);
		const progress_row *r = progress_get(prog, item);
		bool sel = l->top + i == l->sel;
		int y = 2 + i;
		tui_put(w, y, 1, 1, ROLE_SELECT, sel ? theme_glyph(GLYPH_ARROW) : " ");
		if (!sel)
			tui_put(w, y, 1, 1, ROLE_NORMAL, " ");
		tui_putf(w, y, 3, 3, r && r->solved ? ROLE_GOOD : ROLE_NORMAL, "[%s]",
		         !r ? " " : r->solved ? theme_glyph(GLYPH_CHECK) : theme_glyph(GLYPH_PARTIAL));
		tui_put(w, y, 7, 11, sel ? ROLE_SELECT : ROLE_STRONG, ex->id);
		tui_put_fit(w, y, 19, cols - 20, sel ? ROLE_SELECT : ROLE_NORMAL, ex->title ? ex->title : "");
	}
	tui_putf(w, rows - 1, 1, cols - 2, ROLE_DIM, "[%s] solved  [%s] attempted   MIXPREC_STUDENT picks a student's variant",
	         theme_glyph(GLYPH_CHECK), theme_glyph(GLYPH_PARTIAL));
}

static int exlist_handle(tui_screen *s, int action, int key)
{
	(void)key;
	exlist *l = s->priv;
	if (!l->ready)
		return action >= 0 ? TUI_HANDLED : TUI_PASS;
	switch (action) {
	case EL_UP:
		if (l->sel > 0)
			l->sel--;
		return TUI_HANDLED;
	case EL_DOWN:
		if (l->sel + 1 < (int)store.set.count)
			l->sel++;
		return TUI_HANDLED;
	case EL_OPEN: {
		if (!store.set.count)
			return TUI_HANDLED;
		char name[] = "exercise";
		char *args[] = { name, store.set.items[l->sel].id, NULL };
		tui_push_named(s->app, "exercise", 2, args);
		return TUI_HANDLED;
	}
	}
	return TUI_PASS;
}

const tui_screen_ops screen_exercises_ops = {
	.name = "exercises",
	.title = "Exercises",
	.private_size = sizeof(exlist),
	.keys = exlist_keys,
	.nkeys = exlist_ACTION_COUNT,
	.init = exlist_init,
	.draw = exlist_draw,
	.handle = exlist_handle,
	.tick = exlist_tick,
	.busy = exlist_busy,
};

/* --- one exercise --- */

#define EXERCISE_KEYS(X)                                                                            \
	X(EX_UP, "k Up S-Tab", "previous field", 'k', FK(KEY_UP), FK(KEY_BTAB))                      \
	X(EX_DOWN, "j Down Tab", "next field", 'j', FK(KEY_DOWN), '\t')                              \
	X(EX_EDIT, "Enter e", "type an answer (Enter checks, Esc cancels, Up/Down recall)",      \
	  TUI_ENTER_KEYS, 'e')                                                                       \
	X(EX_HINT, "h", "the next hint", 'h')                                                       \
	X(EX_WORKED, "w", "the worked solution (again: back to the answers)", 'w')                   \
	X(EX_SCROLL_DOWN, "J PgDn", "scroll down: hints below, the worked solution", 'J', FK(KEY_NPAGE)) \
	X(EX_SCROLL_UP, "K PgUp", "scroll back up", 'K', FK(KEY_PPAGE))
TUI_KEYMAP(exercise, EXERCISE_KEYS);

typedef struct {
	ex_set own;                /* the lab's own small set (else the store's) */
	bool owns;
	const ex_exercise *ex;
	ex_variant var;
	ex_solution sol;
	bool have_sol;
	char *prompt;
	char *labels[EX_MAX_FIELDS];
	char *hints[EX_MAX_HINTS];
	tui_field answer[EX_MAX_FIELDS];
	ex_verdict verdict[EX_MAX_FIELDS];
	bool checked[EX_MAX_FIELDS];
	char feedback[EX_MAX_FIELDS][512];
	int field;
	bool editing;
	int hints_shown;
	bool worked;
	int worked_top;            /* rows scrolled: the worked solution */
	int page_top;              /* ... and the answer page */
	bool follow;               /* bring the current field into view at the next draw */
	bool reveal_hint;          /* ... and the hint just shown */
	char *worked_text;         /* the worked solution, its prose reflowed */
	bool steps;                /* the hand-rounding lab: one field at a time */
	bool solved_before;        /* progress.csv has it solved (an earlier session, or this one) */
} exview;

/* Exercise files break prompts into lines of their own width: join those
 * into paragraphs for the screen's width, keeping blank lines and lines that
 * start a step ("(1) ...") or a list item ("- ..."); a line that merely
 * begins with a parenthesis joins the one before. */
static void reflow(char *text)
{
	for (char *p = text ? strchr(text, '\n') : NULL; p; p = strchr(p + 1, '\n')) {
		bool step = p[1] == '(' && isdigit((unsigned char)p[2]), item = p[1] == '-' && p[2] == ' ';
		bool keep = p == text || p[-1] == '\n' || p[1] == '\n' || step || item || p[1] == '\0';
		if (!keep)
			*p = ' ';
	}
}

/* Two blanks in a row within the first n bytes: a column gap. */
static bool has_gap(const char *s, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++)
		if (s[i] == ' ' && s[i + 1] == ' ')
			return true;
	return false;
}

/* The worked solution as the engine writes it: prose hard-wrapped to its own
 * width, between aligned rows and indented steps. Joins a line with the next
 * when both are prose (not indented, no column gaps) and the first is long
 * enough to have been wrapped; keeps every other break. */
static char *reflow_worked(const char *text)
{
	char *out = strdup(text ? text : "");
	for (char *p = out ? strchr(out, '\n') : NULL; p; p = strchr(p + 1, '\n')) {
		char *line = p;
		while (line > out && line[-1] != '\n')
			line--;
		size_t len = (size_t)(p - line), next = strcspn(p + 1, "\n");
		bool prose = len >= 50 && line[0] != ' ' && p[1] != ' ' && p[1] != '\n' && p[1] != '\0' &&
		             !has_gap(line, len) && !has_gap(p + 1, next);
		if (prose)
			*p = ' ';
	}
	return out;
}

/* text with {NAME} replaced by the variant's values (malloc'd, or NULL) */
static char *subst(const ex_exercise *ex, const ex_variant *v, const char *text)
{
	ex_exercise tmp = *ex;
	tmp.prompt = (char *)text;
	return ex_prompt(&tmp, v);
}

static mp_status exview_setup(tui_screen *s, const ex_exercise *ex)
{
	exview *e = s->priv;
	e->ex = ex;
	ex_variant_make(e->ex, course_seed(), student(), &e->var);
	char err[512];
	mp_status st = ex_solve(e->ex, &e->var, &e->sol, err, sizeof err);
	if (st != MP_OK) {
		tui_message(s->app, true, "%s: %s", e->ex->id, st == MP_ENOMEM ? "out of memory" : err);
		return st;
	}
	e->have_sol = true;
	e->prompt = ex_prompt(e->ex, &e->var);
	reflow(e->prompt);
	for (size_t i = 0; i < e->ex->nfields; i++)
		e->labels[i] = subst(e->ex, &e->var, e->ex->fields[i].label ? e->ex->fields[i].label : "");
	for (size_t i = 0; i < e->ex->nhints; i++) {
		e->hints[i] = subst(e->ex, &e->var, e->ex->hints[i]);
		reflow(e->hints[i]);
	}
	e->worked_text = reflow_worked(e->sol.worked);
	char item[PROGRESS_ITEM_MAX + 64];
	progress_item(item, sizeof item, e->ex);
	const progress_row *row = progress_get(progcache_get(), item);
	e->solved_before = row && row->solved;
	return MP_OK;
}

/* An exercise of the loaded set (the Exercises list opens it once loaded). */
static mp_status exview_init(tui_screen *s, int argc, char **argv)
{
	const char *id = argc > 1 ? argv[1] : NULL;
	if (!store_ready()) {
		tui_message(s->app, true, "the exercises are not loaded yet: open them from the Exercises list");
		return MP_EINVAL;
	}
	const ex_exercise *ex = id ? ex_find(&store.set, id) : NULL;
	if (!ex) {
		tui_message(s->app, true, "no exercise '%s' (see mixprec exercise list)", id ? id : "");
		return MP_EINVAL;
	}
	return exview_setup(s, ex);
}

/* The hand-rounding lab loads only its own file (fast) and asks one step at
 * a time: round.1 unless another id is given. */
static mp_status handround_init(tui_screen *s, int argc, char **argv)
{
	exview *e = s->priv;
	e->steps = true;
	char path[4200], err[512], *text = NULL;
	size_t len = 0;
	snprintf(path, sizeof path, "%s/hand-rounding.ex", ex_dir());
	if (file_read_all(path, 1 << 20, &text, &len, err, sizeof err) != MP_OK) {
		tui_message(s->app, true, "%s", err);
		return MP_EIO;
	}
	ex_diags d = { 0 };
	mp_status st = ex_load_text(&e->own, path, text, len, &d);
	free(text);
	e->owns = true;
	if (d.count)
		tui_message(s->app, true, "%s", d.msgs[0]);
	ex_diags_free(&d);
	if (st != MP_OK)
		return st;
	const char *id = argc > 1 ? argv[1] : "round.1";
	const ex_exercise *ex = ex_find(&e->own, id);
	if (!ex) {
		tui_message(s->app, true, "no exercise '%s' in %s", id, path);
		return MP_EINVAL;
	}
	return exview_setup(s, ex);
}

static void exview_done(tui_screen *s)
{
	exview *e = s->priv;
	free(e->prompt);
	free(e->worked_text);
	for (size_t i = 0; i < EX_MAX_FIELDS; i++)
		free(e->labels[i]);
	for (size_t i = 0; i < EX_MAX_HINTS; i++)
		free(e->hints[i]);
	if (e->have_sol)
		ex_solution_free(&e->sol);
	if (e->owns)
		ex_set_free(&e->own);
}

/* Fields shown: all, or in step mode up to the first not yet right. */
static size_t shown_fields(const exview *e)
{
	if (!e->steps)
		return e->ex->nfields;
	size_t n = 0;
	while (n < e->ex->nfields && e->checked[n] && e->verdict[n] == EX_CORRECT)
		n++;
	return n < e->ex->nfields ? n + 1 : n;
}

static size_t correct_count(const exview *e)
{
	size_t n = 0;
	for (size_t i = 0; i < e->ex->nfields; i++)
		n += e->checked[i] && e->verdict[i] == EX_CORRECT;
	return n;
}

/* Solved as ex_solved says: every required field right, none left wrong. */
static bool is_solved(const exview *e)
{
	bool right[EX_MAX_FIELDS];
	for (size_t i = 0; i < e->ex->nfields; i++)
		right[i] = e->checked[i] && e->verdict[i] == EX_CORRECT;
	return ex_solved(e->ex, e->checked, right);
}

/* The page is drawn on a pad this tall and the visible part copied to the
 * screen, so that every hint and the whole solution can be scrolled to. */
enum { PAGE_ROWS = 400 };

/* The worked solution, its lines wrapped, from row y; returns the rows used. */
static int draw_worked(const exview *e, WINDOW *w, int y, int cols)
{
	const char *p = e->worked_text ? e->worked_text : "";
	int y0 = y;
	while (*p && y < PAGE_ROWS) {
		size_t n = strcspn(p, "\n");
		char buf[1024];
		snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf - 1 ? n : sizeof buf - 1), p);
		int indent = (int)strspn(buf, " ");
		int used = tui_wrap(w, y, 2 + indent, cols - 3 - indent, PAGE_ROWS - y, ROLE_NORMAL, buf + indent);
		y += used ? used : 1;
		p += n;
		if (*p == '\n')
			p++;
	}
	return y - y0;
}

/* The prompt, the fields, the feedback and the hints shown, from row y;
 * returns the next free row and sets the current field's row and the last
 * hint's last row (-1: none). */
static int draw_answers(const exview *e, WINDOW *w, int y, int cols, int *field_y, int *hint_end)
{
	const ex_exercise *ex = e->ex;
	int rows = PAGE_ROWS;
	size_t nshow = shown_fields(e);
	y += tui_wrap(w, y, 1, cols - 2, rows, ROLE_NORMAL, e->prompt ? e->prompt : "");
	y++;
	int namew = 4;
	for (size_t i = 0; i < ex->nfields; i++) {
		int l = (int)strlen(ex->fields[i].name);
		namew = l > namew ? l : namew;
	}
	namew = namew > 22 ? 22 : namew;
	int ansx = 3 + namew + 1, answ = 22;
	const char *cut = NULL;
	*field_y = y;
	for (size_t i = 0; i < nshow && y < rows - 3; i++) {
		bool cur = (int)i == e->field;
		if (cur)
			*field_y = y;
		tui_put(w, y, 1, 1, ROLE_SELECT, cur ? theme_glyph(GLYPH_ARROW) : " ");
		if (!cur)
			tui_put(w, y, 1, 1, ROLE_NORMAL, " ");
		tui_put(w, y, 3, namew, cur ? ROLE_STRONG : ROLE_NORMAL, ex->fields[i].name);
		if (cur && e->editing) {
			field_draw(w, y, ansx, answ, &e->answer[i], true);
		} else {
			tui_fill(w, y, ansx, answ, ROLE_DIM, theme_utf8() ? "\u00b7" : ".");
			tui_put(w, y, ansx, answ, ROLE_NORMAL, e->answer[i].text);
		}
		int vx = ansx + answ + 1;
		if (e->checked[i]) {
			const char *v = e->verdict[i] == EX_CORRECT ? "right" : e->verdict[i] == EX_WRONG ? "wrong" : "malformed";
			tui_putf(w, y, vx, 11, e->verdict[i] == EX_CORRECT ? ROLE_GOOD : ROLE_BAD, "%s %s",
			         e->verdict[i] == EX_CORRECT ? theme_glyph(GLYPH_CHECK) : "x", v);
			vx += 12;
		}
		const char *label = e->labels[i] ? e->labels[i] : "";
		tui_put_fit(w, y, vx, cols - vx - 1, ROLE_DIM, label);
		if (cur && tui_width(label) > cols - vx - 1)
			cut = label;
		y++;
	}
	/* the current field's label in full when its row cut it short */
	if (cut && y + 1 < rows - 3)
		y += 1 + tui_wrap(w, y + 1, 3, cols - 4, 2, ROLE_DIM, cut);
	/* the current field's feedback */
	if (e->field >= 0 && (size_t)e->field < ex->nfields && e->checked[e->field] && y < rows - 2) {
		y++;
		y += tui_wrap(w, y, 3, cols - 4, 3, e->verdict[e->field] == EX_CORRECT ? ROLE_GOOD : ROLE_BAD,
		              e->feedback[e->field]);
	}
	if (is_solved(e) && y < rows - 2) {
		y++;
		if (correct_count(e) == ex->nfields)
			tui_putf(w, y++, 3, cols - 4, ROLE_GOOD, "Solved: all %zu fields right. w shows the worked solution.",
			         ex->nfields);
		else
			tui_put(w, y++, 3, cols - 4, ROLE_GOOD, "Solved: every required field right, none wrong. w shows the worked solution.");
	} else if (e->solved_before && y < rows - 2) {
		y++;
		y += tui_wrap(w, y, 3, cols - 4, 2, ROLE_GOOD,
		              "Solved before: your progress records it. Answer again to practise; w shows the worked solution.");
	}
	/* hints shown so far */
	*hint_end = -1;
	for (int h = 0; h < e->hints_shown && y < rows - 1; h++) {
		y++;
		char buf[2048];
		snprintf(buf, sizeof buf, "Hint %d of %zu: %s", h + 1, ex->nhints, e->hints[h] ? e->hints[h] : ex->hints[h]);
		y += tui_wrap(w, y, 3, cols - 4, rows - 1 - y, ROLE_EMPH, buf);
		*hint_end = y - 1;
	}
	return y;
}

static void exview_draw(tui_screen *s, WINDOW *w, int rows, int cols)
{
	exview *e = s->priv;
	const ex_exercise *ex = e->ex;
	WINDOW *pad = newpad(PAGE_ROWS, cols);
	if (!pad) {
		tui_put(w, 0, 1, cols - 2, ROLE_BAD, "out of memory for the page");
		return;
	}
	int y = 0, field_y = 0, hint_end = -1;
	tui_putf(pad, y++, 1, cols - 2, ROLE_HEADING, "%s  %s", ex->id, ex->title ? ex->title : "");
	if (e->worked)
		y += 1 + draw_worked(e, pad, y + 1, cols);
	else
		y = draw_answers(e, pad, y, cols, &field_y, &hint_end);
	/* what is in view: the last row is the page's status */
	int view = rows - 1, max_top = y > view ? y - view : 0;
	int *top = e->worked ? &e->worked_top : &e->page_top;
	if (!e->worked && e->follow) {
		/* keep a new hint in view (it wins when it and the field being
		 * answered do not fit together), else the field */
		if (hint_end >= 0 && e->reveal_hint) {
			if (hint_end >= *top + view)
				*top = hint_end - view + 1;
		} else if (field_y < *top || field_y >= *top + view) {
			*top = field_y - view / 3;
		}
		e->follow = e->reveal_hint = false;
	}
	*top = *top < 0 ? 0 : *top > max_top ? max_top : *top;
	copywin(pad, w, *top, 0, 0, 0, view - 1 < PAGE_ROWS - 1 ? view - 1 : PAGE_ROWS - 1, cols - 1, FALSE);
	delwin(pad);
	/* the status; when the page scrolls, where it is (shortened to fit) */
	char line[256], more[64] = "";
	if (max_top > 0)
		snprintf(more, sizeof more, "   J/K scroll %d%%", 100 * *top / max_top);
	for (int shorter = 0; shorter < 2; shorter++) {
		if (e->worked)
			snprintf(line, sizeof line, "worked solution: w back to the answers%s", more);
		else
			snprintf(line, sizeof line, "%zu of %zu right%s   h: hint (%d of %zu)   w: %s%s", correct_count(e),
			         ex->nfields, e->solved_before && !is_solved(e) ? " (solved before)"
			                      : e->steps ? ", one step at a time" : "", e->hints_shown, ex->nhints,
			         shorter ? "solution" : "worked solution", more);
		if (tui_width(line) <= cols - 2)
			break;
	}
	tui_put(w, rows - 1, 1, cols - 2, ROLE_DIM, line);
}

static void record(tui_screen *s, long attempt)
{
	exview *e = s->priv;
	char item[PROGRESS_ITEM_MAX + 64];
	progress_item(item, sizeof item, e->ex);
	if (strlen(item) >= PROGRESS_ITEM_MAX)
		return;
	bool solved = is_solved(e);
	/* written by the recorder thread; a failure shows in the status bar */
	progcache_record(item, attempt, solved, e->hints_shown);
}

static void check_field(tui_screen *s)
{
	exview *e = s->priv;
	size_t i = (size_t)e->field;
	e->verdict[i] = ex_check(e->ex, &e->sol, i, e->answer[i].text, e->feedback[i], sizeof e->feedback[i]);
	e->checked[i] = true;
	record(s, 1);
	if (e->verdict[i] == EX_CORRECT) {
		/* on to the next field that is not right yet */
		for (size_t k = 1; k <= e->ex->nfields; k++) {
			size_t j = (i + k) % e->ex->nfields;
			if (!(e->checked[j] && e->verdict[j] == EX_CORRECT)) {
				if (!e->steps || j == i + 1) {
					/* said aloud, so that the next j is not a surprise */
					e->field = (int)j;
					e->follow = true;
					tui_message(s->app, false, "%s right; the cursor moved on to %s", e->ex->fields[i].name,
					            e->ex->fields[j].name);
				}
				break;
			}
		}
	}
}

static int exview_handle(tui_screen *s, int action, int key)
{
	exview *e = s->priv;
	int nshow = (int)shown_fields(e);
	if (e->editing) {
		int r = field_key(&e->answer[e->field], key);
		if (r == FIELD_ENTER) {
			e->editing = false;
			if (e->answer[e->field].len)
				check_field(s);
		} else if (r == FIELD_CANCEL) {
			e->editing = false;
		}
		return TUI_HANDLED;
	}
	switch (action) {
	case EX_UP:
		if (!e->worked)
			e->field = (e->field + nshow - 1) % nshow;
		e->follow = true;
		return TUI_HANDLED;
	case EX_DOWN:
		if (!e->worked)
			e->field = (e->field + 1) % nshow;
		e->follow = true;
		return TUI_HANDLED;
	case EX_EDIT:
		if (e->worked)
			return TUI_HANDLED;
		e->editing = true;
		e->follow = true;
		field_begin(&e->answer[e->field]);
		return TUI_HANDLED;
	case EX_HINT:
		if (e->hints_shown < (int)e->ex->nhints) {
			e->hints_shown++;
			e->follow = e->reveal_hint = true;
			record(s, 0);
		} else {
			tui_message(s->app, false, "no more hints; w shows the worked solution");
		}
		return TUI_HANDLED;
	case EX_WORKED:
		e->worked = !e->worked;
		e->worked_top = 0;
		if (e->worked && !is_solved(e) && !e->solved_before) {
			/* seen before solving: counts as every hint taken */
			e->hints_shown = (int)e->ex->nhints;
			record(s, 0);
		}
		return TUI_HANDLED;
	case EX_SCROLL_DOWN:   /* the draw stops at the last page */
		*(e->worked ? &e->worked_top : &e->page_top) += 5;
		return TUI_HANDLED;
	case EX_SCROLL_UP: {
		int *top = e->worked ? &e->worked_top : &e->page_top;
		*top = *top > 5 ? *top - 5 : 0;
		return TUI_HANDLED;
	}
	}
	/* typing an answer starts editing it */
	if (action < 0 && !e->worked && key > 0x20 && key < 0x7f) {
		e->editing = true;
		field_begin(&e->answer[e->field]);
		field_set(&e->answer[e->field], "");
		field_key(&e->answer[e->field], key);
		return TUI_HANDLED;
	}
	return TUI_PASS;
}

static bool exview_editing(tui_screen *s)
{
	return ((exview *)s->priv)->editing;
}

const tui_screen_ops screen_exercise_ops = {
	.name = "exercise",
	.title = "Exercise",
	.private_size = sizeof(exview),
	.keys = exercise_keys,
	.nkeys = exercise_ACTION_COUNT,
	.init = exview_init,
	.draw = exview_draw,
	.handle = exview_handle,
	.editing = exview_editing,
	.done = exview_done,
};

const tui_screen_ops screen_handround_ops = {
	.name = "handround",
	.title = "Hand-rounding lab",
	.private_size = sizeof(exview),
	.keys = exercise_keys,
	.nkeys = exercise_ACTION_COUNT,
	.init = handround_init,
	.draw = exview_draw,
	.handle = exview_handle,
	.editing = exview_editing,
	.done = exview_done,
};
