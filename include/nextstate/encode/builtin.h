/* builtin.h — vocabularies and the built-in bag-of-literals encoder
 * (the conventions — global state ids, action ids, row modes, spec
 * syntax — are in learn/world.h's FEATURES AND IDS and ACTION ROW MODES). */
#ifndef NEXTSTATE_ENCODE_BUILTIN_H
#define NEXTSTATE_ENCODE_BUILTIN_H

#include <stdbool.h>
#include "nextstate/encode/features.h"
#include "nextstate/util/util.h"

/* A vocabulary of terms (byte order once sorted), for the built-in encoder. */
typedef struct ns_vocab {
    int n, cap;
    char **terms;
    ns_strmap map;
} ns_vocab;
void ns_vocab_init(ns_vocab *v);
void ns_vocab_free(ns_vocab *v);
/* Adds a term unless present; returns its id. */
int ns_vocab_add(ns_vocab *v, const char *term);
/* Sorts the terms by bytes and renumbers. */
void ns_vocab_sort(ns_vocab *v);

/* Fits the built-in vocabularies on the problems of ds whose mask entry is
 * true (mask NULL: all), adding to sv (atom texts) and av (action terms).
 * Call ns_vocab_sort afterwards. */
void ns_builtin_fit(ns_vocab *sv, ns_vocab *av, const ns_dataset *ds, const bool *mask);
/* Built-in features of every state / ground action of ds (CSR, width
 * v->n). */
void ns_builtin_states(ns_features *f, const ns_dataset *ds, const ns_vocab *v);
void ns_builtin_actions(ns_features *f, const ns_dataset *ds, const ns_vocab *v);

/* Fits the built-in vocabularies on the problems that have transitions in
 * sp's train list (datasets ds[0 … nds)), sorted. */
void ns_builtin_fit_split(ns_vocab *sv, ns_vocab *av, const ns_dataset *const *ds, int nds, const ns_split *sp);


#endif
