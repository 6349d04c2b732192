/* What the parts of lesson check share (lesson_check.c runs the blocks,
 * lesson_bind.c checks that the prose's figures are bound); not for
 * callers outside teach/. */
#ifndef MIXPREC_TEACH_LESSON_CHECK_INT_H
#define MIXPREC_TEACH_LESSON_CHECK_INT_H

#include "teach/lesson_check.h"

/* Appends an item to rep (detail from fmt); NULL when out of memory. */
lesson_check_item *lesson_check_add(lesson_check_report *rep, lesson_check_kind kind, unsigned line, bool ok,
                                    const char *what, const char *fmt, ...);
/* Whether b is a fenced code block with info string info. */
bool lesson_is_code(const lesson_block *b, const char *info);
/* Checks that every figure in the prose of section [first, last) is bound
 * and every range in it is claimed on both sides (lessons/README.md). */
mp_status lesson_bind_section(const lesson_doc *doc, size_t first, size_t last, lesson_check_report *rep);

#endif
