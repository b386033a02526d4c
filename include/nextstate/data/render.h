/* render.h — natural-language renderings of states, goals and problems
 * (EmbedPlan's state prompt), the literal form for symbolic encoders, and the
 * per-domain text templates they are made from.
 *
 * THE PROMPT (exact, from the EmbedPlan paper):
 *
 *   ### PROBLEM DESCRIPTION ###\n{problem}\n\n### CURRENT STATE ###\n{state}\n\n### GOAL DESCRIPTION ###\n{goal}
 *
 * {state} lists one clause per true fluent atom, in the order given (atom-id
 * order), joined "A" / "A, and B" / "A, B, and C" (", " between clauses and
 * ", and " before the last one, also when there are only two).  Static atoms
 * are left out.  {goal} phrases the goal literals the same way; a negative
 * literal uses the predicate's `not:` template or, when there is none,
 * "It is not the case that " + the positive clause (its first letter lower-
 * cased when the template starts with literal text).  {problem} is the
 * template's description paragraph, a space, and an object-count sentence
 * "There are 3 cars and 2 locations." ("There is …" when the first count is
 * 1; "A and B" for two items, "A, B, and C" for more; left out when no
 * `count:` line matches any object).  Actions are rendered as raw grounded
 * PDDL, "(board c1 l1)": use ns_task_op_str().  The "context-only" prompt is
 * the same text with the CURRENT STATE block's content empty.  The "literal
 * form" is the true fluent atoms' PDDL text "(at c0 l0) (on c1)" joined by
 * single spaces.
 *
 * TEMPLATE FILES (domains/NAME/render*.txt), UTF-8, one directive a line:
 *
 *   # a comment: '#' at the start of a line or after a space/tab starts a
 *   # comment running to the end of the line; write "\#" for a literal '#'
 *   domains: ferry ferry-untyped        PDDL domain names (several allowed,
 *                                       separated by spaces or commas; the
 *                                       line may repeat).  Required.
 *   description: A ferry moves cars …   the domain paragraph.  Required; may
 *                                       repeat, the parts are joined by a space.
 *   count: car = {n} car|{n} cars       object count, singular|plural, with
 *                                       {n} for the number.  The key is a type
 *                                       name (an object counts when its type
 *                                       is exactly that name) or a unary
 *                                       static predicate (an object counts
 *                                       when (KEY obj) is a static atom).
 *                                       Counts appear in line order; zero
 *                                       counts are left out.
 *   atom: at = Car {0} is at location {1}
 *                                       the clause of predicate `at`; {i} is
 *                                       the atom's i-th argument (0-based).
 *   atom: at-robby/2 = Robot {0} is in {1}
 *                                       "/N" restricts a template to atoms
 *                                       with N arguments (for domains that
 *                                       share a name but not the arities);
 *                                       an exact NAME/N entry wins over NAME.
 *   not: on = Car {0} is not on the ferry
 *                                       optional negative form of a predicate
 *                                       (used for negative goal literals).
 *
 * Names are case-insensitive.  Every predicate a problem uses (fluent atoms,
 * static atoms and goal literals) needs an `atom:` template: a missing one
 * is an error when a problem is prepared, never a silent omission.  Static
 * predicates get templates too (they are checked, and available through
 * ns_render_prep_static_clause(), but never appear in the prompt).  Errors
 * in a template file carry path:line:col.  Texts may not contain '{' or '}'
 * other than in placeholders.
 *
 * USE: load a template (ns_render_load, or ns_render_find by PDDL domain
 * name), describe a problem by names (ns_render_problem — no task needed, so
 * datasets read from disk can be rendered), prepare it once
 * (ns_render_prep_new: every atom's clause, the problem and goal texts are
 * rendered up front), then render any number of states; each is a linear
 * copy of precomputed clauses.  The one-shot ns_render_prompt() & co.
 * prepare and free internally (convenient, but O(problem size) per call).
 *
 * All output functions APPEND to the caller's ns_buf. */
#ifndef NEXTSTATE_RENDER_H
#define NEXTSTATE_RENDER_H

#include <stdbool.h>
#include <stdint.h>
#include "nextstate/util/error.h"
#include "nextstate/util/util.h"

typedef struct ns_render ns_render;           /* one loaded template file */
typedef struct ns_render_prep ns_render_prep; /* a template applied to one problem */

/* What a problem looks like to the renderer: names only. */
typedef struct ns_render_problem {
    int nobjects;
    const char *const *objects;      /* object names */
    const char *const *object_types; /* type name per object ("object" when untyped) */
    int natoms;
    const char *const *atoms;   /* fluent atoms as PDDL text "(at c0 l0)", indexed by atom id */
    int nstatics;               /* may be 0 / NULL: static atoms true in the problem, */
    const char *const *statics; /* "(not-eq l0 l1)"; used for counts and checks only */
    int ngoal;
    const char *const *goal; /* goal literals, "(at c0 l1)" or "(not (on c1))" */
} ns_render_problem;

/* Loads and checks one template file.  Errors: NS_ERR_IO (unreadable),
 * NS_ERR_INPUT with path:line:col for malformed lines. */
ns_status ns_render_load(ns_render **r, const char *path, ns_error *err);

/* Parses a template from text; path only names it in error messages. */
ns_status ns_render_parse(ns_render **r, const char *text, const char *path,
                          ns_error *err);

/* Finds the template for a PDDL domain name (case-insensitive) by loading
 * every domains_dir/<folder>/render*.txt (in sorted path order) and picking
 * the one whose `domains:` line lists the name.  Any malformed template, no
 * match, or more than one match is an error (NS_ERR_INPUT).  domains_dir
 * NULL: $NEXTSTATE_DOMAINS, else ./domains, else the domains folder beside
 * the executable's folder (the repository's, for build/nextstate). */
ns_status ns_render_find(ns_render **r, const char *domains_dir,
                         const char *pddl_domain_name, ns_error *err);

void ns_render_free(ns_render *r);

/* The file a template was loaded from. */
const char *ns_render_path(const ns_render *r);

/* Does the template list PDDL domain `name` on its `domains:` line(s)? */
bool ns_render_applies_to(const ns_render *r, const char *name);

/* Is there an `atom:` template for predicate `pred` with `arity` arguments? */
bool ns_render_covers(const ns_render *r, const char *pred, int arity);

/* Applies template r to problem p: renders every fluent and static atom's
 * clause, the problem description and the goal description.  r and p may be
 * freed afterwards (the result copies what it needs).  Errors
 * (NS_ERR_INPUT): malformed atom or literal text, a predicate without a
 * template (the message names the predicate, arity and atom), a placeholder
 * beyond an atom's arguments. */
ns_status ns_render_prep_new(ns_render_prep **out, const ns_render *r,
                             const ns_render_problem *p, ns_error *err);
void ns_render_prep_free(ns_render_prep *pp);

/* Number of fluent atoms of the prepared problem. */
int ns_render_prep_natoms(const ns_render_prep *pp);
/* The clause of fluent atom `atom` (0 <= atom < natoms), e.g. "Car c0 is at location l0". */
const char *ns_render_prep_clause(const ns_render_prep *pp, int atom);
/* The clause of static atom i (0 <= i < p->nstatics). */
const char *ns_render_prep_static_clause(const ns_render_prep *pp, int i);
/* The {problem} text: description paragraph and counts. */
const char *ns_render_prep_problem_text(const ns_render_prep *pp);
/* The {goal} text. */
const char *ns_render_prep_goal_text(const ns_render_prep *pp);

/* Appends the full prompt for the state whose true fluent atoms are
 * true_atoms[0..ntrue), strictly ascending ids in [0, natoms)
 * (NS_ERR_INPUT otherwise; nothing is appended then). */
ns_status ns_render_prep_prompt(const ns_render_prep *pp, const int *true_atoms,
                                int ntrue, ns_buf *out, ns_error *err);
/* Appends the {state} block alone ("" for no true atoms); same contract. */
ns_status ns_render_prep_state(const ns_render_prep *pp, const int *true_atoms,
                               int ntrue, ns_buf *out, ns_error *err);
/* The same two for a state given as a bitset over fluent atoms
 * (ceil(natoms/64) 64-bit words, bit i of word i/64 = atom i; bits at or
 * beyond natoms are ignored). */
void ns_render_prep_prompt_bits(const ns_render_prep *pp, const uint64_t *bits, ns_buf *out);
void ns_render_prep_state_bits(const ns_render_prep *pp, const uint64_t *bits, ns_buf *out);
/* Prompt layouts.  NS_PROMPT_PAPER is the exact prompt above (the default
 * everywhere).  NS_PROMPT_STATE_FIRST holds the same blocks with the state
 * first,
 *   "### CURRENT STATE ###\n{state}\n\n### PROBLEM DESCRIPTION ###\n{problem}\n\n### GOAL DESCRIPTION ###\n{goal}",
 * so that an encoder which truncates its input (all-MiniLM-L6-v2 reads 256
 * word pieces) loses the constant problem and goal text rather than the
 * state. */
typedef enum ns_prompt_layout { NS_PROMPT_PAPER, NS_PROMPT_STATE_FIRST } ns_prompt_layout;
const char *ns_prompt_layout_name(ns_prompt_layout l); /* "paper", "state-first" */
int ns_prompt_layout_parse(const char *s);             /* -1 when unknown */
void ns_render_prep_prompt_layout_bits(const ns_render_prep *pp, const uint64_t *bits, ns_prompt_layout l, ns_buf *out);
/* The same prompt with the CURRENT STATE clauses in a random order (the
 * paper's fact-order sensitivity, appendix N: a state is a set, its clause
 * order is semantically null): the true atoms' ids permuted by a
 * Fisher–Yates shuffle from an ns_rng seeded with `seed`, then joined as
 * usual (", and " before the last clause in its new place); the problem and
 * goal blocks are untouched.  Deterministic in seed; a caller rendering many
 * states derives one seed per state (e.g. ns_text_list_dataset_order). */
void ns_render_prep_prompt_shuffled_bits(const ns_render_prep *pp, const uint64_t *bits, ns_prompt_layout l,
                                         uint64_t seed, ns_buf *out);
/* Appends the prompt with an empty CURRENT STATE block:
 * "### PROBLEM DESCRIPTION ###\n{problem}\n\n### CURRENT STATE ###\n\n\n### GOAL DESCRIPTION ###\n{goal}". */
void ns_render_prep_context_only(const ns_render_prep *pp, ns_buf *out);

/* One-shot versions: prepare r for p, render, free. */
ns_status ns_render_prompt(const ns_render *r, const ns_render_problem *p,
                           const int *true_atoms, int ntrue, ns_buf *out,
                           ns_error *err);
ns_status ns_render_context_only(const ns_render *r, const ns_render_problem *p,
                                 ns_buf *out, ns_error *err);
ns_status ns_render_state_clauses(const ns_render *r, const ns_render_problem *p,
                                  const int *true_atoms, int ntrue, ns_buf *out,
                                  ns_error *err);

/* Appends the literal form "(at c0 l0) (on c1)": the texts of
 * p->atoms[true_atoms[i]] joined by single spaces, in the order given.  Ids
 * must lie in [0, p->natoms) (NS_ERR_INPUT otherwise; nothing appended). */
ns_status ns_render_literals(const ns_render_problem *p, const int *true_atoms,
                             int ntrue, ns_buf *out, ns_error *err);

/* Names of a grounded task, owned: objects with their type names, fluent
 * atoms in atom-id order (ns_task_atom_str), static atoms
 * (ns_task_static_str) and the problem's goal literals in file order
 * ("(not (p a))" for negative ones, "(= a b)" for equality).  `p` is ready to
 * pass to the functions above; ns_render_names_free releases it. */
struct ns_task;
typedef struct ns_render_names {
    ns_render_problem p;
    char **strings; /* every string below, for freeing */
    int nstrings;
} ns_render_names;
void ns_render_names_from_task(ns_render_names *n, const struct ns_task *t);
void ns_render_names_free(ns_render_names *n);

/* Writes the ids of the set bits below natoms, ascending, into ids (room for
 * natoms); returns their number.  Turns a state bitset into true_atoms. */
int ns_render_true_atoms(const uint64_t *bits, int natoms, int *ids);

#endif
