/* gen.c — random solvable problem generators for the shipped domains.
 *
 * One generator per domain, each in the spirit of the standard IPC generator
 * of that domain, writing objects and predicates the way the ACPBench
 * problems of the domain name them (spanner, miconic, childsnack, transport,
 * sokoban: the IPC 2023 Learning Track's).  Every generator makes its problems
 * solvable by construction (the argument is in the comment above each one).
 * All choices come from one ns_rng seeded by the caller's seed, so the same
 * (domain, options, seed) always gives the same bytes.
 *
 * Layout: a table of domains, each with its option table (name, default,
 * minimum, help) and its generator function, which receives the option
 * values in table order.  Cross-option constraints (e.g. floortile: robots
 * <= columns) are checked by the generator before it writes anything. */
#include "nextstate/core/gen.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEN_MAX_VALUE 100000   /* upper bound on any single option */
#define GEN_MAX_CELLS 1000000L /* upper bound on grid areas and similar products */

typedef ns_status (*gen_fn)(const int *v, ns_rng *r, ns_buf *out, ns_error *err);

/* ---------------------------------------------------------------- helpers */

static int rnd(ns_rng *r, int n) { return (int)ns_rng_below(r, (uint64_t)n); }
static bool chance(ns_rng *r, int percent) { return rnd(r, 100) < percent; }

/* Writes "    (" fmt ")\n": one atom per line. */
static void atom(ns_buf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void atom(ns_buf *out, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    ns_buf_printf(out, "    (%s)\n", tmp);
}

/* One line of objects "    p0 p1 … - type" for names prefix<i>suffix, i in
 * [from, from+n); no "- type" when type is NULL (untyped domains). */
static void objects(ns_buf *out, const char *prefix, const char *suffix, int from, int n,
                    const char *type)
{
    if (n <= 0) return;
    ns_buf_puts(out, "   ");
    for (int i = from; i < from + n; i++) ns_buf_printf(out, " %s%d%s", prefix, i, suffix);
    if (type)
        ns_buf_printf(out, " - %s\n", type);
    else
        ns_buf_putc(out, '\n');
}

static void objects_begin(ns_buf *out) { ns_buf_puts(out, "  (:objects\n"); }
static void init_begin(ns_buf *out) { ns_buf_puts(out, "  )\n  (:init\n"); }
static void goal_begin(ns_buf *out) { ns_buf_puts(out, "  )\n  (:goal (and\n"); }
static void goal_end(ns_buf *out) { ns_buf_puts(out, "  ))\n"); }

static ns_status bad(ns_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static ns_status bad(ns_error *err, const char *fmt, ...)
{
    char tmp[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    return ns_error_set(err, NS_ERR_USAGE, NULL, 0, 0, "%s", tmp);
}

/* 0 … n-1 in random order (caller frees). */
static int *random_perm(ns_rng *r, int n)
{
    int *p = ns_xmalloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++) p[i] = i;
    ns_rng_shuffle_int(r, p, (size_t)n);
    return p;
}

/* Writes the up-to-4 grid neighbours of cell c into nbr (-1 where none). */
static void grid_neighbours(int na, int nb, int c, int nbr[4])
{
    int a = c / nb, b = c % nb;
    nbr[0] = a > 0 ? c - nb : -1;
    nbr[1] = a < na - 1 ? c + nb : -1;
    nbr[2] = b > 0 ? c - 1 : -1;
    nbr[3] = b < nb - 1 ? c + 1 : -1;
}

/* Grid cells are numbered row-major: cell = a * nb + b.  Fills reach[] with
 * the cells connected to `start` through cells where pass[c] is true. */
static void grid_flood(int na, int nb, const bool *pass, int start, bool *reach, int *queue)
{
    memset(reach, 0, sizeof(bool) * (size_t)(na * nb));
    int head = 0, tail = 0;
    reach[start] = true;
    queue[tail++] = start;
    while (head < tail) {
        int c = queue[head++], nbr[4];
        grid_neighbours(na, nb, c, nbr);
        for (int k = 0; k < 4; k++)
            if (nbr[k] >= 0 && pass[nbr[k]] && !reach[nbr[k]]) {
                reach[nbr[k]] = true;
                queue[tail++] = nbr[k];
            }
    }
}

/* ------------------------------------------------------------ blocksworld */

/* A uniformly random blocksworld state (the method of Slaney & Thiébaux's
 * bwstates, which made the IPC problems): n blocks form k towers in
 * L(n,k) = C(n-1,k-1)·n!/k! ways; draw k with that weight, then cut a random
 * permutation into k towers at k-1 random gaps.  below[b] = block under b,
 * -1 for the table. */
static void bw_state(ns_rng *r, int n, int *below)
{
    double *lf = ns_xmalloc(sizeof(double) * (size_t)(n + 1)); /* log factorials */
    double *w = ns_xmalloc(sizeof(double) * (size_t)(n + 1));
    lf[0] = 0;
    for (int i = 1; i <= n; i++) lf[i] = lf[i - 1] + log((double)i);
    double top = -HUGE_VAL, total = 0;
    for (int k = 1; k <= n; k++) {
        w[k] = lf[n - 1] - lf[k - 1] - lf[n - k] - lf[k];
        if (w[k] > top) top = w[k];
    }
    for (int k = 1; k <= n; k++) total += (w[k] = exp(w[k] - top));
    double u = ns_rng_double(r) * total;
    int towers = 1;
    while (towers < n && u >= w[towers]) u -= w[towers++];

    int *perm = random_perm(r, n);
    int *gaps = random_perm(r, n - 1 > 0 ? n - 1 : 0); /* gap g lies before perm[g+1] */
    bool *cut = ns_xcalloc((size_t)n + 1, sizeof(bool));
    for (int i = 0; i < towers - 1; i++) cut[gaps[i] + 1] = true;
    for (int i = 0; i < n; i++) below[perm[i]] = (i == 0 || cut[i]) ? -1 : perm[i - 1];
    free(lf);
    free(w);
    free(perm);
    free(gaps);
    free(cut);
}

/* Blocksworld (bw-rand): uniformly random initial and goal states; the goal
 * lists the `on` atoms of the goal state (all `ontable` when there are none).
 * Every state is reachable from every other, so the problem is solvable. */
static ns_status gen_blocksworld(const int *v, ns_rng *r, ns_buf *out, ns_error *err)
{
    (void)err;
    int n = v[0];
    int *init = ns_xmalloc(sizeof(int) * (size_t)n), *goal = ns_xmalloc(sizeof(int) * (size_t)n);
    bw_state(r, n, init);
    for (int tries = 0; tries < 100; tries++) { /* avoid a goal that already holds */
        bw_state(r, n, goal);
        if (n < 2 || memcmp(init, goal, sizeof(int) * (size_t)n) != 0) break;
    }
    bool *covered = ns_xcalloc((size_t)n, sizeof(bool));
    for (int b = 0; b < n; b++)
        if (init[b] >= 0) covered[init[b]] = true;

    objects_begin(out);
    objects(out, "block_", "", 1, n, NULL);
    init_begin(out);
    atom(out, "handempty");
    for (int b = 0; b < n; b++) {
        if (!covered[b]) atom(out, "clear block_%d", b + 1);
        if (init[b] < 0)
            atom(out, "ontable block_%d", b + 1);
        else
            atom(out, "on block_%d block_%d", b + 1, init[b] + 1);
    }
    goal_begin(out);
    int non = 0;
    for (int b = 0; b < n; b++)
        if (goal[b] >= 0) {
            atom(out, "on block_%d block_%d", b + 1, goal[b] + 1);
            non++;
        }
    if (non == 0)
        for (int b = 0; b < n; b++) atom(out, "ontable block_%d", b + 1);
    goal_end(out);
    free(init);
    free(goal);
    free(covered);
    return NS_OK;
}

/* ---------------------------------------------------------------- gripper */

/* Gripper: robots with a left and a right gripper move balls between rooms.
 * scatter 0 is the IPC layout: robots and balls start in room1 and every
 * ball must reach room2 (another random room than room1 when rooms > 2).
 * scatter 1 puts robots and balls in random rooms with random goal rooms
 * (like the multi-room ACPBench instances).  Always solvable: any robot can
 * carry any ball anywhere. */
static ns_status gen_gripper(const int *v, ns_rng *r, ns_buf *out, ns_error *err)
{
    int balls = v[0], rooms = v[1], robots = v[2], scatter = v[3];
    if (scatter > 1) return bad(err, "gripper: scatter must be 0 or 1");
    int *from = ns_xmalloc(sizeof(int) * (size_t)balls), *to = ns_xmalloc(sizeof(int) * (size_t)balls);
    int *robot_room = ns_xmalloc(sizeof(int) * (size_t)robots);
    bool any_moves = false;
    for (int i = 0; i < robots; i++) robot_room[i] = scatter ? rnd(r, rooms) : 0;
    for (int b = 0; b < balls; b++) {
        from[b] = scatter ? rnd(r, rooms) : 0;
        to[b] = scatter ? rnd(r, rooms) : (rooms == 2 ? 1 : 1 + rnd(r, rooms - 1));
        any_moves |= from[b] != to[b];
    }
    if (!any_moves) to[0] = (from[0] + 1 + rnd(r, rooms - 1)) % rooms;

    objects_begin(out);
    objects(out, "ball", "", 1, balls, "ball");
    ns_buf_puts(out, "   ");
    for (int i = 1; i <= robots; i++) ns_buf_printf(out, " left%d right%d", i, i);
    ns_buf_puts(out, " - gripper\n");
    objects(out, "robot", "", 1, robots, "robot");
    objects(out, "room", "", 1, rooms, "room");
    init_begin(out);
    for (int i = 0; i < robots; i++) {
        atom(out, "at-robby robot%d room%d", i + 1, robot_room[i] + 1);
        atom(out, "free robot%d left%d", i + 1, i + 1);
        atom(out, "free robot%d right%d", i + 1, i + 1);
    }
    for (int b = 0; b < balls; b++) atom(out, "at ball%d room%d", b + 1, from[b] + 1);
    goal_begin(out);
    for (int b = 0; b < balls; b++) atom(out, "at ball%d room%d", b + 1, to[b] + 1);
    goal_end(out);
    free(from);
    free(to);
    free(robot_room);
    return NS_OK;
}

/* -------------------------------------------------------------- logistics */

/* Logistics (IPC generator layout): `cities` cities with `size` locations
 * each, location l<c>-0 being the city's airport; one truck per city at a
 * random location of it; airplanes at random airports; packages at random
 * locations, each with a goal location different from its start.  Solvable:
 * trucks reach every location of their city and airplanes every airport. */
static ns_status gen_logistics(const int *v, ns_rng *r, ns_buf *out, ns_error *err)
{
    int cities = v[0], size = v[1], planes = v[2], packages = v[3];
    long nloc = (long)cities * size;
    if (nloc > GEN_MAX_CELLS) return bad(err, "logistics: cities * size is too large");
    objects_begin(out);
    objects(out, "a", "", 0, planes, "airplane");
    ns_buf_puts(out, "   ");
    for (int c = 0; c < cities; c++) ns_buf_printf(out, " l%d-0", c);
    ns_buf_puts(out, " - airport\n");
    objects(out, "c", "", 0, cities, "city");
    if (size > 1) {
        ns_buf_puts(out, "   ");
        for (int c = 0; c < cities; c++)
            for (int i = 1; i < size; i++) ns_buf_printf(out, " l%d-%d", c, i);
        ns_buf_puts(out, " - location\n");
    }
    objects(out, "p", "", 0, packages, "package");
    objects(out, "t", "", 0, cities, "truck");
    init_begin(out);
    for (int c = 0; c < cities; c++)
        for (int i = 0; i < size; i++) atom(out, "in-city l%d-%d c%d", c, i, c);
    for (int c = 0; c < cities; c++) atom(out, "at t%d l%d-%d", c, c, rnd(r, size));
    for (int a = 0; a < planes; a++) atom(out, "at a%d l%d-0", a, rnd(r, cities));
    int *goal = ns_xmalloc(sizeof(int) * (size_t)packages);
    for (int p = 0; p < packages; p++) {
        int from = rnd(r, (int)nloc), to = from;
        if (nloc > 1) to = (from + 1 + rnd(r, (int)nloc - 1)) % (int)nloc;
        goal[p] = to;
        atom(out, "at p%d l%d-%d", p, from / size, from % size);
    }
    goal_begin(out);
    for (int p = 0; p < packages; p++) atom(out, "at p%d l%d-%d", p, goal[p] / size, goal[p] % size);
    goal_end(out);
    free(goal);
    return NS_OK;
}

/* --------------------------------------------------------------- visitall */

/* Visit-All (IPC generator layout): an x × y grid of cells loc-x<i>-y<j>
 * minus `holes` random cells; the robot starts in a random cell, or with
 * center 1 in the centre cell (x/2, y/2) as in the IPC generator (with no
 * holes and goals 100 the problem then does not depend on the seed).  A hole
 * is only made where the remaining cells stay connected, so every cell is
 * reachable.  Each cell is a goal with probability goals/100 (the start cell
 * always, as in the IPC generator; at least one other cell when there is
 * one). */
static ns_status gen_visitall(const int *v, ns_rng *r, ns_buf *out, ns_error *err)
{
    int nx = v[0], ny = v[1], holes = v[2], goals = v[3], center = v[4];
    long cells = (long)nx * ny;
    if (cells > GEN_MAX_CELLS) return bad(err, "visitall: x * y is too large");
    if (cells < 2) return bad(err, "visitall: the grid needs at least 2 cells");
    if (holes > cells - 2) return bad(err, "visitall: holes must be at most x*y - 2 = %ld", cells - 2);
    if (goals > 100) return bad(err, "visitall: goals is a percentage (0..100)");
    if (center > 1) return bad(err, "visitall: center must be 0 or 1");
    int n = (int)cells; /* cell = i * ny + j */
    int start = center ? (nx / 2) * ny + ny / 2 : rnd(r, n);
    bool *keep = ns_xmalloc(sizeof(bool) * (size_t)n), *reach = ns_xmalloc(sizeof(bool) * (size_t)n);
    int *queue = ns_xmalloc(sizeof(int) * (size_t)n);
    for (int c = 0; c < n; c++) keep[c] = true;
    int made = 0;
    while (made < holes) { /* a connected graph always has a removable non-start cell */
        int *order = random_perm(r, n);
        for (int k = 0; k < n && made < holes; k++) {
            int c = order[k];
            if (c == start || !keep[c]) continue;
            keep[c] = false;
            grid_flood(nx, ny, keep, start, reach, queue);
            bool ok = true;
            for (int d = 0; d < n; d++) ok &= !keep[d] || reach[d];
            if (ok)
                made++;
            else
                keep[c] = true;
        }
        free(order);
    }
    bool *is_goal = ns_xcalloc((size_t)n, sizeof(bool));
    int ngoal = 0;
    for (int c = 0; c < n; c++)
        if (keep[c] && c != start && chance(r, goals)) is_goal[c] = true, ngoal++;
    if (ngoal == 0) { /* pick one other kept cell */
        int k = rnd(r, n - holes - 1);
        for (int c = 0; c < n; c++)
            if (keep[c] && c != start && k-- == 0) is_goal[c] = true;
    }
    is_goal[start] = true;

    objects_begin(out);
    ns_buf_puts(out, "   ");
    for (int c = 0; c < n; c++)
        if (keep[c]) ns_buf_printf(out, " loc-x%d-y%d", c / ny, c % ny);
    ns_buf_puts(out, " - place\n");
    init_begin(out);
    atom(out, "at-robot loc-x%d-y%d", start / ny, start % ny);
    atom(out, "visited loc-x%d-y%d", start / ny, start % ny);
    for (int c = 0; c < n; c++) {
        if (!keep[c]) continue;
        int i = c / ny, j = c % ny, nbr[4];
        grid_neighbours(nx, ny, c, nbr);
        for (int k = 0; k < 4; k++)
            if (nbr[k] >= 0 && keep[nbr[k]])
                atom(out, "connected loc-x%d-y%d loc-x%d-y%d", i, j, nbr[k] / ny, nbr[k] % ny);
    }
    goal_begin(out);
    for (int c = 0; c < n; c++)
        if (is_goal[c]) atom(out, "visited loc-x%d-y%d", c / ny, c % ny);
    goal_end(out);
    free(keep);
    free(reach);
    free(queue);
    free(is_goal);
    return NS_OK;
}

/* ------------------------------------------------------------------ depot */

/* Random stacks of crates on pallets: each crate, in random order, goes on
 * top of a random pallet's stack.  on[c] = surface under crate c (pallet
 * ids 0…P-1, crate c as P + c); top[p] = topmost surface of pallet p. */
static void depot_stacks(ns_rng *r, int pallets, int crates, int *on, int *top)
{
    for (int p = 0; p < pallets; p++) top[p] = p;
    int *order = random_perm(r, crates);
    for (int k = 0; k < crates; k++) {
        int c = order[k], p = rnd(r, pallets);
        on[c] = top[p];
        top[p] = pallets + c;
    }
    free(order);
}

/* Depots (IPC generator layout): places are depot0… then distributor0…;
 * place i has hoist i and pallet i, extra hoists and pallets stand at random
 * places; trucks start at random places; crates are stacked at random on
 * pallets; the goal stacks every crate anew at random.  Solvable: every
 * place has a hoist, so crates can be unstacked into a truck, carried
 * anywhere and restacked in any order. */
static ns_status gen_depot(const int *v, ns_rng *r, ns_buf *out, ns_error *err)
{
    int depots = v[0], dists = v[1], trucks = v[2], pallets = v[3], hoists = v[4], crates = v[5];
    int places = depots + dists;
    if (pallets < places) return bad(err, "depot: pallets must be >= depots + distributors (%d)", places);
    if (hoists < places) return bad(err, "depot: hoists must be >= depots + distributors (%d)", places);
    int *pallet_at = ns_xmalloc(sizeof(int) * (size_t)pallets);
    int *on = ns_xmalloc(sizeof(int) * (size_t)crates), *goal_on = ns_xmalloc(sizeof(int) * (size_t)crates);
    int *top = ns_xmalloc(sizeof(int) * (size_t)pallets);
    for (int p = 0; p < pallets; p++) pallet_at[p] = p < places ? p : rnd(r, places);
    depot_stacks(r, pallets, crates, on, top);
    bool *covered = ns_xcalloc((size_t)(pallets + crates), sizeof(bool));
    for (int c = 0; c < crates; c++) covered[on[c]] = true;
    int *crate_at = ns_xmalloc(sizeof(int) * (size_t)crates);
    for (int c = 0; c < crates; c++) { /* follow the stack down to its pallet */
        int s = on[c];
        while (s >= pallets) s = on[s - pallets];
        crate_at[c] = pallet_at[s];
    }
    int *tmp_top = ns_xmalloc(sizeof(int) * (size_t)pallets);
    for (int tries = 0; tries < 100; tries++) {
        depot_stacks(r, pallets, crates, goal_on, tmp_top);
        if (memcmp(on, goal_on, sizeof(int) * (size_t)crates) != 0) break;
    }

#define PLACE_NAME(i) ((i) < depots ? "depot" : "distributor"), ((i) < depots ? (i) : (i)-depots)
    objects_begin(out);
    objects(out, "crate", "", 0, crates, "crate");
    objects(out, "depot", "", 0, depots, "depot");
    objects(out, "distributor", "", 0, dists, "distributor");
    objects(out, "hoist", "", 0, hoists, "hoist");
    objects(out, "pallet", "", 0, pallets, "pallet");
    objects(out, "truck", "", 0, trucks, "truck");
    init_begin(out);
    for (int p = 0; p < pallets; p++) atom(out, "at pallet%d %s%d", p, PLACE_NAME(pallet_at[p]));
    for (int t = 0; t < trucks; t++) {
        int at = rnd(r, places);
        atom(out, "at truck%d %s%d", t, PLACE_NAME(at));
    }
    for (int h = 0; h < hoists; h++) {
        int at = h < places ? h : rnd(r, places);
        atom(out, "at hoist%d %s%d", h, PLACE_NAME(at));
        atom(out, "available hoist%d", h);
    }
    for (int c = 0; c < crates; c++) {
        atom(out, "at crate%d %s%d", c, PLACE_NAME(crate_at[c]));
        if (on[c] < pallets)
            atom(out, "on crate%d pallet%d", c, on[c]);
        else
            atom(out, "on crate%d crate%d", c, on[c] - pallets);
    }
    for (int s = 0; s < pallets + crates; s++)
        if (!covered[s]) atom(out, "clear %s%d", s < pallets ? "pallet" : "crate", s < pallets ? s : s - pallets);
    goal_begin(out);
    for (int c = 0; c < crates; c++) {
        if (goal_on[c] < pallets)
            atom(out, "on crate%d pallet%d", c, goal_on[c]);
        else
            atom(out, "on crate%d crate%d", c, goal_on[c] - pallets);
    }
    goal_end(out);
#undef PLACE_NAME
    free(pallet_at);
    free(on);
    free(goal_on);
    free(top);
    free(tmp_top);
    free(covered);
    free(crate_at);
    return NS_OK;
}

/* ------------------------------------------------------------------ ferry */

/* Ferry (IPC generator layout): the ferry and every car start at random
 * locations; each car must reach a random other location.  Solvable: the
 * ferry sails between any two locations. */
static ns_status gen_ferry(const int *v, ns_rng *r, ns_buf *out, ns_error *err)
{
    int locs = v[0], cars = v[1];
    if ((long)locs * locs > GEN_MAX_CELLS) return bad(err, "ferry: too many locations (not-eq lists every pair)");
    int *goal = ns_xmalloc(sizeof(int) * (size_t)cars);
    objects_begin(out);
    objects(out, "c", "", 0, cars, "car");
    objects(out, "l", "", 0, locs, "location");
    init_begin(out);
    atom(out, "at-ferry l%d", rnd(r, locs));
    atom(out, "empty-ferry");
    for (int c = 0; c < cars; c++) {
        int from = rnd(r, locs);
        goal[c] = (from + 1 + rnd(r, locs - 1)) % locs;
        atom(out, "at c%d l%d", c, from);
    }
    for (int a = 0; a < locs; a++)
        for (int b = 0; b < locs; b++)
            if (a != b) atom(out, "not-eq l%d l%d", a, b);
    goal_begin(out);
    for (int c = 0; c < cars; c++) atom(out, "at c%d l%d", c, goal[c]);
    goal_end(out);
    free(goal);
    return NS_OK;
}

/* -------------------------------------------------------------- floortile */

/* Floor-tile (IPC generator layout): rows+1 rows of `columns` tiles,
 * tile_<row*columns + col + 1> with row 0 at the bottom; the top `rows` rows
 * must be painted in a checkerboard (white where painted-row + col is even),
 * the bottom row stays unpainted.  Robots start in distinct columns at a
 * random row, robot1 with white, robot2 black, alternating.
 * Solvable when robots <= columns: robots can be moved (nothing is painted
 * yet) to distinct bottom-row tiles; robot 1 then paints the columns not
 * occupied from below by the others one at a time (climb to the row under
 * the top, paint-up, step down, paint-up, … back on the bottom row), walking
 * along the bottom row, and every other robot paints its own column alike. */
static ns_status gen_floortile(const int *v, ns_rng *r, ns_buf *out, ns_error *err)
{
    int rows = v[0], cols = v[1], robots = v[2];
    if ((long)(rows + 1) * cols > GEN_MAX_CELLS) return bad(err, "floortile: rows * columns is too large");
    if (robots > cols) return bad(err, "floortile: robots must be <= columns (%d)", cols);
    int ntiles = (rows + 1) * cols;
    bool *occupied = ns_xcalloc((size_t)ntiles, sizeof(bool));
    int *col_order = random_perm(r, cols), *robot_tile = ns_xmalloc(sizeof(int) * (size_t)robots);
    for (int i = 0; i < robots; i++) {
        robot_tile[i] = rnd(r, rows + 1) * cols + col_order[i];
        occupied[robot_tile[i]] = true;
    }
    objects_begin(out);
    ns_buf_puts(out, "    black white - color\n");
    objects(out, "robot", "", 1, robots, "robot");
    objects(out, "tile_", "", 1, ntiles, "tile");
    init_begin(out);
    atom(out, "available-color black");
    atom(out, "available-color white");
    for (int i = 0; i < robots; i++) {
        atom(out, "robot-at robot%d tile_%d", i + 1, robot_tile[i] + 1);
        atom(out, "robot-has robot%d %s", i + 1, i % 2 == 0 ? "white" : "black");
    }
    for (int t = 0; t < ntiles; t++)
        if (!occupied[t]) atom(out, "clear tile_%d", t + 1);
    for (int t = 0; t + cols < ntiles; t++) {
        atom(out, "up tile_%d tile_%d", t + cols + 1, t + 1);
        atom(out, "down tile_%d tile_%d", t + 1, t + cols + 1);
    }
    for (int t = 0; t < ntiles; t++)
        if (t % cols < cols - 1) {
            atom(out, "right tile_%d tile_%d", t + 2, t + 1);
            atom(out, "left tile_%d tile_%d", t + 1, t + 2);
        }
    goal_begin(out);
    for (int row = 0; row < rows; row++)
        for (int c = 0; c < cols; c++)
            atom(out, "painted tile_%d %s", (row + 1) * cols + c + 1, (row + c) % 2 == 0 ? "white" : "black");
    goal_end(out);
    free(occupied);
    free(col_order);
    free(robot_tile);
    return NS_OK;
}

/* -------------------------------------------------------------- goldminer */

/* Gold-miner (the IPC 2008 generator's layout): cells f<row>-<col>f; the
 * first column is clear, with the robot in a random row and the bomb supply
 * and the laser together in another row; every other cell holds soft or hard
 * rock at random; the gold sits in a random row of the last column under
 * soft rock, and a winding path of soft rock leads from it back to column 1.
 * Solvable: the laser clears a way next to the gold (any rock), is put down
 * there, and a bomb from the supply clears the gold's soft rock. */
static ns_status gen_goldminer(const int *v, ns_rng *r, ns_buf *out, ns_error *err)
{
    int rows = v[0], cols = v[1];
    if ((long)rows * cols > GEN_MAX_CELLS) return bad(err, "goldminer: rows * cols is too large");
    enum { CLEAR, SOFT, HARD };
    int n = rows * cols;
    unsigned char *cell = ns_xmalloc((size_t)n);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) cell[i * cols + j] = j == 0 ? CLEAR : (rnd(r, 2) ? HARD : SOFT);
    int robot = rnd(r, rows);
    int supply = (robot + 1 + rnd(r, rows - 1)) % rows;
    int gold = rnd(r, rows);
    /* The soft path: from the gold, runs up, down or left (no reversal),
     * until it reaches column 1. */
    int ci = gold, cj = cols - 1, dir = rnd(r, 3); /* 0 up, 1 down, 2 left */
    cell[ci * cols + cj] = SOFT;
    while (cj > 1) {
        if (dir == 2) {
            for (int s = 0; s < 2 && cj > 1; s++) cell[ci * cols + --cj] = SOFT;
            dir = rnd(r, 3);
        } else {
            int room = dir == 0 ? ci : rows - 1 - ci;
            int steps = room > 0 ? 1 + rnd(r, room) : 0;
            for (int s = 0; s < steps; s++) {
                ci += dir == 0 ? -1 : 1;
                cell[ci * cols + cj] = SOFT;
            }
            dir = room > 0 && rnd(r, 2) ? dir : 2;
        }
    }
    objects_begin(out);
    for (int i = 0; i < rows; i++) {
        ns_buf_puts(out, "   ");
        for (int j = 0; j < cols; j++) ns_buf_printf(out, " f%d-%df", i, j);
        ns_buf_puts(out, i == rows - 1 ? " - loc\n" : "\n");
    }
    init_begin(out);
    atom(out, "arm-empty");
    for (int c = 0; c < n; c++) {
        int i = c / cols, j = c % cols, nbr[4];
        grid_neighbours(rows, cols, c, nbr);
        for (int k = 0; k < 4; k++)
            if (nbr[k] >= 0) atom(out, "connected f%d-%df f%d-%df", i, j, nbr[k] / cols, nbr[k] % cols);
    }
    atom(out, "robot-at f%d-0f", robot);
    atom(out, "bomb-at f%d-0f", supply);
    atom(out, "laser-at f%d-0f", supply);
    atom(out, "gold-at f%d-%df", gold, cols - 1);
    for (int c = 0; c < n; c++) {
        static const char *const what[] = {"clear", "soft-rock-at", "hard-rock-at"};
        atom(out, "%s f%d-%df", what[cell[c]], c / cols, c % cols);
    }
    goal_begin(out);
    atom(out, "holds-gold");
    goal_end(out);
    free(cell);
    return NS_OK;
}

/* ------------------------------------------------------------------- grid */

/* Grid (after the IPC generator, made solvable): an x × y grid of places
 * f<x>-<y>f; `locks` random places are locked, each with a random shape
 * among those that have keys; the robot starts on a random open place.
 * Keys are placed by simulating an opening order: while some lock remains,
 * take a random lock next to the region the robot can reach; if no key of
 * its shape lies in that region, put one of the unplaced keys of that shape
 * at a random place of the region; open the lock and grow the region.  The
 * other keys go anywhere.  Each key gets a random goal place with
 * probability goals/100 (at least one key has a goal).  Solvable: the
 * simulated order opens every lock, after which every place is reachable
 * and keys can be carried one at a time to their goals. */
static ns_status gen_grid(const int *v, ns_rng *r, ns_buf *out, ns_error *err)
{
    int nx = v[0], ny = v[1], shapes = v[2], keys = v[3], locks = v[4], goals = v[5];
    long cells = (long)nx * ny;
    if (cells > GEN_MAX_CELLS) return bad(err, "grid: x * y is too large");
    if (cells < 2) return bad(err, "grid: the grid needs at least 2 places");
    if (locks > cells - 1) return bad(err, "grid: locks must be <= x*y - 1 (%ld)", cells - 1);
    if (goals > 100) return bad(err, "grid: goals is a percentage (0..100)");
    int n = (int)cells; /* place = i * ny + j for f<i>-<j>f */
    int usable = keys < shapes ? keys : shapes; /* shapes that have a key */
    int *key_shape = ns_xmalloc(sizeof(int) * (size_t)keys), *key_at = ns_xmalloc(sizeof(int) * (size_t)keys);
    int *key_idx = ns_xmalloc(sizeof(int) * (size_t)keys); /* index within its shape */
    int *per_shape = ns_xcalloc((size_t)shapes, sizeof(int));
    for (int k = 0; k < keys; k++) {
        key_shape[k] = k < shapes ? k : rnd(r, shapes);
        key_idx[k] = per_shape[key_shape[k]]++;
        key_at[k] = -1;
    }
    int *lock_shape = ns_xmalloc(sizeof(int) * (size_t)n); /* -1: not a lock */
    for (int c = 0; c < n; c++) lock_shape[c] = -1;
    int *order = random_perm(r, n);
    for (int l = 0; l < locks; l++) lock_shape[order[l]] = rnd(r, usable);
    int start = order[locks + rnd(r, n - locks)];
    free(order);

    bool *is_open = ns_xmalloc(sizeof(bool) * (size_t)n), *reach = ns_xmalloc(sizeof(bool) * (size_t)n);
    int *queue = ns_xmalloc(sizeof(int) * (size_t)n), *cand = ns_xmalloc(sizeof(int) * (size_t)n);
    for (int c = 0; c < n; c++) is_open[c] = lock_shape[c] < 0;
    for (;;) {
        grid_flood(nx, ny, is_open, start, reach, queue);
        int nf = 0;
        for (int c = 0; c < n; c++) {
            if (is_open[c]) continue;
            int nbr[4];
            grid_neighbours(nx, ny, c, nbr);
            bool next_to = false;
            for (int k = 0; k < 4; k++) next_to |= nbr[k] >= 0 && reach[nbr[k]];
            if (next_to) cand[nf++] = c;
        }
        if (nf == 0) break; /* every lock is open in the simulation */
        int lock = cand[rnd(r, nf)], s = lock_shape[lock];
        bool have = false;
        for (int k = 0; k < keys; k++) have |= key_shape[k] == s && key_at[k] >= 0;
        if (!have) { /* place a random unplaced key of shape s in the region */
            int nk = 0, nr = 0;
            for (int k = 0; k < keys; k++)
                if (key_shape[k] == s && key_at[k] < 0) cand[nk++] = k;
            int k = cand[rnd(r, nk)];
            for (int c = 0; c < n; c++) nr += reach[c];
            int pick = rnd(r, nr);
            for (int c = 0; c < n; c++)
                if (reach[c] && pick-- == 0) key_at[k] = c;
        }
        is_open[lock] = true;
    }
    for (int k = 0; k < keys; k++)
        if (key_at[k] < 0) key_at[k] = rnd(r, n);
    int *key_goal = ns_xmalloc(sizeof(int) * (size_t)keys), ngoal = 0;
    for (int k = 0; k < keys; k++) {
        key_goal[k] = -1;
        if (chance(r, goals)) key_goal[k] = (key_at[k] + 1 + rnd(r, n - 1)) % n, ngoal++;
    }
    if (ngoal == 0) {
        int k = rnd(r, keys);
        key_goal[k] = (key_at[k] + 1 + rnd(r, n - 1)) % n;
    }

    objects_begin(out);
    ns_buf_puts(out, "   ");
    for (int k = 0; k < keys; k++) ns_buf_printf(out, " key%d-%d", key_shape[k], key_idx[k]);
    ns_buf_puts(out, " - key\n");
    for (int i = 0; i < nx; i++) {
        ns_buf_puts(out, "   ");
        for (int j = 0; j < ny; j++) ns_buf_printf(out, " f%d-%df", i, j);
        ns_buf_puts(out, i == nx - 1 ? " - place\n" : "\n");
    }
    objects(out, "shape", "", 0, shapes, "shape");
    init_begin(out);
    atom(out, "arm-empty");
    atom(out, "at-robot f%d-%df", start / ny, start % ny);
    for (int c = 0; c < n; c++) {
        int i = c / ny, j = c % ny, nbr[4];
        grid_neighbours(nx, ny, c, nbr);
        for (int k = 0; k < 4; k++)
            if (nbr[k] >= 0) atom(out, "conn f%d-%df f%d-%df", i, j, nbr[k] / ny, nbr[k] % ny);
    }
    for (int c = 0; c < n; c++) {
        if (lock_shape[c] < 0) {
            atom(out, "open f%d-%df", c / ny, c % ny);
        } else {
            atom(out, "locked f%d-%df", c / ny, c % ny);
            atom(out, "lock-shape f%d-%df shape%d", c / ny, c % ny, lock_shape[c]);
        }
    }
    for (int k = 0; k < keys; k++) {
        atom(out, "key-shape key%d-%d shape%d", key_shape[k], key_idx[k], key_shape[k]);
        atom(out, "at key%d-%d f%d-%df", key_shape[k], key_idx[k], key_at[k] / ny, key_at[k] % ny);
    }
    goal_begin(out);
    for (int k = 0; k < keys; k++)
        if (key_goal[k] >= 0)
            atom(out, "at key%d-%d f%d-%df", key_shape[k], key_idx[k], key_goal[k] / ny, key_goal[k] % ny);
    goal_end(out);
    free(key_shape);
    free(key_at);
    free(key_idx);
    free(per_shape);
    free(lock_shape);
    free(is_open);
    free(reach);
    free(queue);
    free(cand);
    free(key_goal);
    return NS_OK;
}

/* ----------------------------------------------------------------- rovers */

static const char *const rover_modes[3] = {"colour", "high_res", "low_res"};

/* Rovers (after the IPC generator, made solvable by construction): the
 * waypoints' visibility graph is a random spanning tree plus each other pair
 * with probability 1/3; every rover can traverse the tree edges (and each
 * other visible edge with probability 1/2), so it reaches every waypoint.
 * Rovers are equipped for soil / rock analysis at random (at least one of
 * each); a rover is equipped for imaging when it carries a camera (cameras
 * go to random rovers, with a random calibration objective and a random
 * non-empty set of modes).  Objectives are visible from a random non-empty
 * set of waypoints; waypoints hold soil / rock samples at random (at least
 * one of each).  The lander `general` sits at a random waypoint, which has
 * a visible neighbour.  The goal is `goals` distinct atoms drawn from every
 * achievable one: soil / rock data of sampled waypoints and image data of
 * (objective, mode) for modes some camera supports. */
static ns_status gen_rovers(const int *v, ns_rng *r, ns_buf *out, ns_error *err)
{
    int rovers = v[0], wps = v[1], objs = v[2], cams = v[3], goals = v[4];
    if ((long)wps * wps > GEN_MAX_CELLS) return bad(err, "rovers: too many waypoints");
    bool *vis = ns_xcalloc((size_t)wps * (size_t)wps, sizeof(bool));
    bool *tree = ns_xcalloc((size_t)wps * (size_t)wps, sizeof(bool));
    int *perm = random_perm(r, wps);
    for (int i = 1; i < wps; i++) {
        int a = perm[i], b = perm[rnd(r, i)];
        vis[a * wps + b] = vis[b * wps + a] = tree[a * wps + b] = tree[b * wps + a] = true;
    }
    free(perm);
    for (int a = 0; a < wps; a++)
        for (int b = a + 1; b < wps; b++)
            if (!vis[a * wps + b] && rnd(r, 3) == 0) vis[a * wps + b] = vis[b * wps + a] = true;
    int lander = rnd(r, wps);

    bool *soil_eq = ns_xcalloc((size_t)rovers, sizeof(bool)), *rock_eq = ns_xcalloc((size_t)rovers, sizeof(bool));
    bool *img_eq = ns_xcalloc((size_t)rovers, sizeof(bool));
    int *rover_at = ns_xmalloc(sizeof(int) * (size_t)rovers);
    bool any_soil = false, any_rock = false;
    for (int i = 0; i < rovers; i++) {
        rover_at[i] = rnd(r, wps);
        soil_eq[i] = rnd(r, 2);
        rock_eq[i] = rnd(r, 2);
        any_soil |= soil_eq[i];
        any_rock |= rock_eq[i];
    }
    if (!any_soil) soil_eq[rnd(r, rovers)] = true;
    if (!any_rock) rock_eq[rnd(r, rovers)] = true;
    int *cam_on = ns_xmalloc(sizeof(int) * (size_t)cams), *cam_target = ns_xmalloc(sizeof(int) * (size_t)cams);
    int *cam_modes = ns_xmalloc(sizeof(int) * (size_t)cams), supported = 0;
    for (int c = 0; c < cams; c++) {
        cam_on[c] = rnd(r, rovers);
        img_eq[cam_on[c]] = true;
        cam_target[c] = rnd(r, objs);
        cam_modes[c] = 1 + rnd(r, 7); /* bit m: supports rover_modes[m] */
        supported |= cam_modes[c];
    }
    bool *obj_vis = ns_xcalloc((size_t)objs * (size_t)wps, sizeof(bool));
    for (int o = 0; o < objs; o++) {
        bool any = false;
        for (int w = 0; w < wps; w++) {
            obj_vis[o * wps + w] = rnd(r, 2);
            any |= obj_vis[o * wps + w];
        }
        if (!any) obj_vis[o * wps + rnd(r, wps)] = true;
    }
    bool *soil = ns_xcalloc((size_t)wps, sizeof(bool)), *rock = ns_xcalloc((size_t)wps, sizeof(bool));
    any_soil = any_rock = false;
    for (int w = 0; w < wps; w++) {
        soil[w] = rnd(r, 2);
        rock[w] = rnd(r, 2);
        any_soil |= soil[w];
        any_rock |= rock[w];
    }
    if (!any_soil) soil[rnd(r, wps)] = true;
    if (!any_rock) rock[rnd(r, wps)] = true;

    /* Goal candidates, coded kind * big + index: 0 soil w, 1 rock w, 2 image o*3+m. */
    int big = wps > objs * 3 ? wps : objs * 3, ncand = 0;
    int *cand = ns_xmalloc(sizeof(int) * (size_t)(2 * wps + 3 * objs));
    for (int w = 0; w < wps; w++)
        if (soil[w]) cand[ncand++] = w;
    for (int w = 0; w < wps; w++)
        if (rock[w]) cand[ncand++] = big + w;
    for (int o = 0; o < objs; o++)
        for (int m = 0; m < 3; m++)
            if (supported >> m & 1) cand[ncand++] = 2 * big + o * 3 + m;
    int *pick = random_perm(r, ncand), ngoal = goals < ncand ? goals : ncand;
    bool *chosen = ns_xcalloc((size_t)ncand, sizeof(bool));
    for (int g = 0; g < ngoal; g++) chosen[pick[g]] = true;
    free(pick);

    objects_begin(out);
    objects(out, "camera", "", 0, cams, "camera");
    ns_buf_puts(out, "    general - lander\n");
    ns_buf_puts(out, "    colour high_res low_res - mode\n");
    objects(out, "objective", "", 0, objs, "objective");
    objects(out, "rover", "", 0, rovers, "rover");
    objects(out, "store", "", 0, rovers, "store");
    objects(out, "waypoint", "", 0, wps, "waypoint");
    init_begin(out);
    atom(out, "at_lander general waypoint%d", lander);
    atom(out, "channel_free general");
    for (int a = 0; a < wps; a++)
        for (int b = 0; b < wps; b++)
            if (vis[a * wps + b]) atom(out, "visible waypoint%d waypoint%d", a, b);
    for (int w = 0; w < wps; w++) {
        if (soil[w]) atom(out, "at_soil_sample waypoint%d", w);
        if (rock[w]) atom(out, "at_rock_sample waypoint%d", w);
    }
    for (int i = 0; i < rovers; i++) {
        atom(out, "at rover%d waypoint%d", i, rover_at[i]);
        atom(out, "available rover%d", i);
        atom(out, "store_of store%d rover%d", i, i);
        atom(out, "empty store%d", i);
        if (soil_eq[i]) atom(out, "equipped_for_soil_analysis rover%d", i);
        if (rock_eq[i]) atom(out, "equipped_for_rock_analysis rover%d", i);
        if (img_eq[i]) atom(out, "equipped_for_imaging rover%d", i);
        /* Both directions of every tree edge, and of other visible edges at random. */
        for (int a = 0; a < wps; a++)
            for (int b = a + 1; b < wps; b++)
                if (tree[a * wps + b] || (vis[a * wps + b] && rnd(r, 2))) {
                    atom(out, "can_traverse rover%d waypoint%d waypoint%d", i, a, b);
                    atom(out, "can_traverse rover%d waypoint%d waypoint%d", i, b, a);
                }
    }
    for (int c = 0; c < cams; c++) {
        atom(out, "on_board camera%d rover%d", c, cam_on[c]);
        atom(out, "calibration_target camera%d objective%d", c, cam_target[c]);
        for (int m = 0; m < 3; m++)
            if (cam_modes[c] >> m & 1) atom(out, "supports camera%d %s", c, rover_modes[m]);
    }
    for (int o = 0; o < objs; o++)
        for (int w = 0; w < wps; w++)
            if (obj_vis[o * wps + w]) atom(out, "visible_from objective%d waypoint%d", o, w);
    goal_begin(out);
    for (int g = 0; g < ncand; g++) {
        if (!chosen[g]) continue;
        int kind = cand[g] / big, idx = cand[g] % big;
        if (kind == 0)
            atom(out, "communicated_soil_data waypoint%d", idx);
        else if (kind == 1)
            atom(out, "communicated_rock_data waypoint%d", idx);
        else
            atom(out, "communicated_image_data objective%d %s", idx / 3, rover_modes[idx % 3]);
    }
    goal_end(out);
    free(vis);
    free(tree);
    free(soil_eq);
    free(rock_eq);
    free(img_eq);
    free(rover_at);
    free(cam_on);
    free(cam_target);
    free(cam_modes);
    free(obj_vis);
    free(soil);
    free(rock);
    free(cand);
    free(chosen);
    return NS_OK;
}

/* -------------------------------------------------------------- satellite */

/* Satellite (after the IPC generator): directions 0 … targets-1 are
 * calibration targets named star<i> or groundstation<i>, directions
 * targets … targets+observations-1 are observed, named star<i>, planet<i> or
 * phenomenon<i>; modes are <kind><j> with a random kind (image, infrared,
 * spectrograph, thermograph).  Each satellite carries 1 … `instruments`
 * instruments, each supporting a random non-empty set of modes and
 * calibrated on a random calibration target.  Satellites point at random
 * directions with power available.  Goals: an image of every observed
 * direction in a random supported mode, and for each satellite with
 * probability 1/3 a final pointing direction.  Solvable: any satellite can
 * turn to its instrument's target, switch on, calibrate, turn and shoot. */
static ns_status gen_satellite(const int *v, ns_rng *r, ns_buf *out, ns_error *err)
{
    int sats = v[0], max_inst = v[1], modes = v[2], targets = v[3], obs = v[4];
    if ((long)sats * max_inst > GEN_MAX_CELLS) return bad(err, "satellite: too many instruments");
    static const char *const mode_kind[4] = {"image", "infrared", "spectrograph", "thermograph"};
    static const char *const cal_kind[2] = {"star", "groundstation"};
    static const char *const obs_kind[3] = {"star", "planet", "phenomenon"};
    int ndir = targets + obs;
    int *dir_kind = ns_xmalloc(sizeof(int) * (size_t)ndir), *mkind = ns_xmalloc(sizeof(int) * (size_t)modes);
    for (int d = 0; d < ndir; d++) dir_kind[d] = d < targets ? rnd(r, 2) : rnd(r, 3);
    for (int m = 0; m < modes; m++) mkind[m] = rnd(r, 4);
#define DIR(d) ((d) < targets ? cal_kind[dir_kind[d]] : obs_kind[dir_kind[d]]), (d)
#define MODE(m) mode_kind[mkind[m]], (m)
    int *inst_sat = NULL, ninst = 0;
    size_t cap = 0;
    for (int s = 0; s < sats; s++) {
        int k = 1 + rnd(r, max_inst);
        for (int i = 0; i < k; i++) {
            NS_GROW(inst_sat, cap, (size_t)ninst + 1);
            inst_sat[ninst++] = s;
        }
    }
    bool *sup = ns_xcalloc((size_t)ninst * (size_t)modes, sizeof(bool));
    bool *mode_ok = ns_xcalloc((size_t)modes, sizeof(bool));
    int *cal = ns_xmalloc(sizeof(int) * (size_t)ninst);
    for (int i = 0; i < ninst; i++) {
        bool any = false;
        for (int m = 0; m < modes; m++) {
            sup[i * modes + m] = rnd(r, 2);
            any |= sup[i * modes + m];
        }
        if (!any) sup[i * modes + rnd(r, modes)] = true;
        for (int m = 0; m < modes; m++) mode_ok[m] |= sup[i * modes + m];
        cal[i] = rnd(r, targets);
    }
    int *ok_modes = ns_xmalloc(sizeof(int) * (size_t)modes), nok = 0;
    for (int m = 0; m < modes; m++)
        if (mode_ok[m]) ok_modes[nok++] = m;

    objects_begin(out);
    ns_buf_puts(out, "   ");
    for (int d = 0; d < ndir; d++) ns_buf_printf(out, " %s%d", DIR(d));
    ns_buf_puts(out, " - direction\n");
    objects(out, "instrument", "", 0, ninst, "instrument");
    ns_buf_puts(out, "   ");
    for (int m = 0; m < modes; m++) ns_buf_printf(out, " %s%d", MODE(m));
    ns_buf_puts(out, " - mode\n");
    objects(out, "satellite", "", 0, sats, "satellite");
    init_begin(out);
    for (int s = 0; s < sats; s++) {
        int d = rnd(r, ndir);
        atom(out, "pointing satellite%d %s%d", s, DIR(d));
        atom(out, "power_avail satellite%d", s);
    }
    for (int i = 0; i < ninst; i++) {
        atom(out, "on_board instrument%d satellite%d", i, inst_sat[i]);
        for (int m = 0; m < modes; m++)
            if (sup[i * modes + m]) atom(out, "supports instrument%d %s%d", i, MODE(m));
        atom(out, "calibration_target instrument%d %s%d", i, DIR(cal[i]));
    }
    goal_begin(out);
    for (int s = 0; s < sats; s++)
        if (rnd(r, 3) == 0) {
            int d = rnd(r, ndir);
            atom(out, "pointing satellite%d %s%d", s, DIR(d));
        }
    for (int d = targets; d < ndir; d++) {
        int m = ok_modes[rnd(r, nok)];
        atom(out, "have_image %s%d %s%d", DIR(d), MODE(m));
    }
    goal_end(out);
#undef DIR
#undef MODE
    free(dir_kind);
    free(mkind);
    free(inst_sat);
    free(sup);
    free(mode_ok);
    free(cal);
    free(ok_modes);
    return NS_OK;
}

/* ---------------------------------------------- IPC 2023 Learning Track */

/* Spanner (IPC generator layout): bob in the shed, the chain shed →
 * location1 → … → locationL → gate, each spanner usable at a random chain
 * location, every nut loose at the gate.  Solvable when spanners >= nuts:
 * walk the chain picking up every spanner, then tighten each nut with its own. */
static ns_status gen_spanner(const int *v, ns_rng *r, ns_buf *out, ns_error *err)
{
    int spanners = v[0], nuts = v[1], locs = v[2];
    if (spanners < nuts) return bad(err, "spanner: spanners (%d) must be >= nuts (%d)", spanners, nuts);
    objects_begin(out);
    ns_buf_puts(out, "    bob - man\n");
    objects(out, "spanner", "", 1, spanners, "spanner");
    objects(out, "nut", "", 1, nuts, "nut");
    ns_buf_puts(out, "    shed gate - location\n");
    objects(out, "location", "", 1, locs, "location");
    init_begin(out);
    atom(out, "at bob shed");
    for (int s = 1; s <= spanners; s++) {
        atom(out, "at spanner%d location%d", s, 1 + rnd(r, locs));
        atom(out, "usable spanner%d", s);
    }
    for (int n = 1; n <= nuts; n++) {
        atom(out, "at nut%d gate", n);
        atom(out, "loose nut%d", n);
    }
    atom(out, "link shed location1");
    for (int l = 1; l < locs; l++) atom(out, "link location%d location%d", l, l + 1);
    atom(out, "link location%d gate", locs);
    goal_begin(out);
    for (int n = 1; n <= nuts; n++) atom(out, "tightened nut%d", n);
    goal_end(out);
    return NS_OK;
}

/* Miconic (IPC generator layout): floors f1 … fF, (above fi fj) for i < j,
 * the lift at a random floor, each passenger with distinct random origin and
 * destination floors.  Solvable: the lift reaches every floor. */
static ns_status gen_miconic(const int *v, ns_rng *r, ns_buf *out, ns_error *err)
{
    int passengers = v[0], floors = v[1];
    if ((long)floors * floors > GEN_MAX_CELLS) return bad(err, "miconic: too many floors (above lists every pair)");
    objects_begin(out);
    objects(out, "p", "", 1, passengers, "passenger");
    objects(out, "f", "", 1, floors, "floor");
    init_begin(out);
    atom(out, "lift-at f%d", 1 + rnd(r, floors));
    for (int p = 1; p <= passengers; p++) {
        int from = rnd(r, floors), to = (from + 1 + rnd(r, floors - 1)) % floors;
        atom(out, "origin p%d f%d", p, from + 1);
        atom(out, "destin p%d f%d", p, to + 1);
    }
    for (int a = 1; a <= floors; a++)
        for (int b = a + 1; b <= floors; b++) atom(out, "above f%d f%d", a, b);
    goal_begin(out);
    for (int p = 1; p <= passengers; p++) atom(out, "served p%d", p);
    goal_end(out);
    return NS_OK;
}

/* Childsnack (IPC generator layout; kitchen is the domain's constant): as
 * many bread and content portions as children, as many of each gluten-free
 * as allergic children, every tray in the kitchen, each child waiting at a
 * random table.  Solvable when sandwiches >= children: make a gluten-free
 * sandwich per allergic child and a plain one per other child, then per
 * child put its sandwich on a tray, move the tray to the child's table and
 * serve. */
static ns_status gen_childsnack(const int *v, ns_rng *r, ns_buf *out, ns_error *err)
{
    int children = v[0], allergic = v[1], trays = v[2], tables = v[3], sandwiches = v[4];
    if (allergic > children) return bad(err, "childsnack: allergic (%d) must be <= children (%d)", allergic, children);
    if (sandwiches < children)
        return bad(err, "childsnack: sandwiches (%d) must be >= children (%d)", sandwiches, children);
    int *kids = random_perm(r, children), *bread = random_perm(r, children), *content = random_perm(r, children);
    objects_begin(out);
    objects(out, "child", "", 1, children, "child");
    objects(out, "tray", "", 1, trays, "tray");
    objects(out, "sandw", "", 1, sandwiches, "sandwich");
    objects(out, "bread", "", 1, children, "bread-portion");
    objects(out, "content", "", 1, children, "content-portion");
    objects(out, "table", "", 1, tables, "place");
    init_begin(out);
    for (int t = 1; t <= trays; t++) atom(out, "at tray%d kitchen", t);
    for (int b = 1; b <= children; b++) atom(out, "at_kitchen_bread bread%d", b);
    for (int c = 1; c <= children; c++) atom(out, "at_kitchen_content content%d", c);
    for (int k = 0; k < children; k++)
        atom(out, "%s child%d", k < allergic ? "allergic_gluten" : "not_allergic_gluten", kids[k] + 1);
    for (int k = 0; k < allergic; k++) atom(out, "no_gluten_bread bread%d", bread[k] + 1);
    for (int k = 0; k < allergic; k++) atom(out, "no_gluten_content content%d", content[k] + 1);
    for (int k = 0; k < children; k++) atom(out, "waiting child%d table%d", kids[k] + 1, 1 + rnd(r, tables));
    for (int s = 1; s <= sandwiches; s++) atom(out, "notexist sandw%d", s);
    goal_begin(out);
    for (int c = 1; c <= children; c++) atom(out, "served child%d", c);
    goal_end(out);
    free(kids);
    free(bread);
    free(content);
    return NS_OK;
}

/* Transport: locations l1 … lL joined by two-way roads (a random tree, each
 * location after the first joined to a random earlier one in a random order,
 * plus `roads` more random pairs), sizes c0 … cC with capacity-predecessor
 * c(i) c(i+1), each vehicle at a random location with a random room 1 … C,
 * each package at a random location with a goal at another.  Solvable: the
 * road graph is connected and every vehicle has room for one package. */
static ns_status gen_transport(const int *v, ns_rng *r, ns_buf *out, ns_error *err)
{
    int vehicles = v[0], packages = v[1], locs = v[2], capacity = v[3], extra = v[4];
    if ((long)locs * locs > GEN_MAX_CELLS) return bad(err, "transport: too many locations");
    if (packages > 0 && locs < 2) return bad(err, "transport: packages need at least 2 locations");
    bool *road = ns_xcalloc((size_t)locs * (size_t)locs, sizeof *road);
    int *order = random_perm(r, locs);
    for (int i = 1; i < locs; i++) {
        int a = order[i], b = order[rnd(r, i)];
        road[a * locs + b] = road[b * locs + a] = true;
    }
    long pairs = (long)locs * (locs - 1) / 2, have = locs - 1;
    for (int e = 0; e < extra && have < pairs; e++) { /* a new pair each time, while there is one */
        int a, b;
        do a = rnd(r, locs), b = rnd(r, locs);
        while (a == b || road[a * locs + b]);
        road[a * locs + b] = road[b * locs + a] = true;
        have++;
    }
    objects_begin(out);
    objects(out, "v", "", 1, vehicles, "vehicle");
    objects(out, "p", "", 1, packages, "package");
    objects(out, "l", "", 1, locs, "location");
    objects(out, "c", "", 0, capacity + 1, "size");
    init_begin(out);
    for (int i = 1; i <= vehicles; i++) atom(out, "capacity v%d c%d", i, 1 + rnd(r, capacity));
    for (int c = 0; c < capacity; c++) atom(out, "capacity-predecessor c%d c%d", c, c + 1);
    int *goal = ns_xmalloc(sizeof(int) * (size_t)(packages > 0 ? packages : 1));
    for (int p = 0; p < packages; p++) {
        int from = rnd(r, locs);
        goal[p] = (from + 1 + rnd(r, locs - 1)) % locs;
        atom(out, "at p%d l%d", p + 1, from + 1);
    }
    for (int i = 1; i <= vehicles; i++) atom(out, "at v%d l%d", i, 1 + rnd(r, locs));
    for (int a = 0; a < locs; a++)
        for (int b = 0; b < locs; b++)
            if (road[a * locs + b]) atom(out, "road l%d l%d", a + 1, b + 1);
    goal_begin(out);
    for (int p = 0; p < packages; p++) atom(out, "at p%d l%d", p + 1, goal[p] + 1);
    goal_end(out);
    free(goal);
    free(order);
    free(road);
    return NS_OK;
}

/* Sokoban (IPC 2023 Learning Track layout: loc_R_C for every cell of a
 * size × size grid, 1-based, its border all wall; the four directions are
 * the domain's constants).  Inner cells turn to wall at random (walls
 * percent) while the floor stays connected; the boxes start on their goal
 * cells and the robot on another floor cell, then random reverse moves (a
 * step to a free cell, or, half the time when a box is behind the robot, a
 * pull: the robot steps away and the box follows) scatter them until
 * `steps` pulls were made (at most 100 × (steps + 1) moves tried).
 * Solvable: each reverse move is undone by a forward move or push, so the
 * reverse moves backwards solve the problem. */
static ns_status gen_sokoban(const int *v, ns_rng *r, ns_buf *out, ns_error *err)
{
    int size = v[0], boxes = v[1], walls = v[2], steps = v[3];
    if (size > 100) return bad(err, "sokoban: size must be <= 100");
    if (walls > 100) return bad(err, "sokoban: walls is a percentage (0..100)");
    int n = size * size, inner = (size - 2) * (size - 2);
    if (boxes >= inner) return bad(err, "sokoban: boxes must be < (size - 2)^2 (%d)", inner);
    static const char *const dname[4] = {"up", "down", "left", "right"}; /* grid_neighbours' order */
    bool *floor = ns_xcalloc((size_t)n, sizeof *floor), *reach = ns_xmalloc((size_t)n * sizeof *reach);
    int *queue = ns_xmalloc((size_t)n * sizeof *queue), *box_at = ns_xmalloc((size_t)n * sizeof *box_at);
    int *goal = ns_xmalloc((size_t)boxes * sizeof *goal), *pos = ns_xmalloc((size_t)boxes * sizeof *pos);
    int nfloor = inner;
    for (int c = 0; c < n; c++) {
        floor[c] = c / size > 0 && c / size < size - 1 && c % size > 0 && c % size < size - 1;
        box_at[c] = -1;
    }
    int *order = random_perm(r, n);
    for (int i = 0; i < n; i++) { /* a wall where the rest of the floor stays connected and roomy */
        int c = order[i];
        if (!floor[c] || nfloor <= boxes + 1 || !chance(r, walls)) continue;
        floor[c] = false;
        int start = c, seen = 0;
        for (int k = 0; k < n && start == c; k++)
            if (floor[k]) start = k;
        grid_flood(size, size, floor, start, reach, queue);
        for (int k = 0; k < n; k++) seen += reach[k];
        if (seen == nfloor - 1) nfloor--;
        else floor[c] = true;
    }
    int *cells = ns_xmalloc((size_t)nfloor * sizeof *cells), m = 0;
    for (int i = 0; i < n; i++)
        if (floor[order[i]]) cells[m++] = order[i];
    for (int b = 0; b < boxes; b++) goal[b] = pos[b] = cells[b], box_at[cells[b]] = b;
    int robot = cells[boxes + rnd(r, nfloor - boxes)];
    bool solved = true;
    for (long t = 0, pulls = 0; (pulls < steps || solved) && t < 100L * (steps + 1); t++) {
        int d = rnd(r, 4), nbr[4];
        grid_neighbours(size, size, robot, nbr);
        int to = nbr[d], behind = nbr[d ^ 1]; /* the robot's inner cell has all four */
        if (!floor[to] || box_at[to] >= 0) continue;
        if (floor[behind] && box_at[behind] >= 0 && chance(r, 50)) { /* pull */
            int b = box_at[behind];
            box_at[behind] = -1, box_at[robot] = b, pos[b] = robot;
            pulls++;
        }
        robot = to;
        solved = true;
        for (int b = 0; b < boxes && solved; b++) solved = pos[b] == goal[b];
    }
    objects_begin(out);
    ns_buf_puts(out, "   ");
    for (int c = 0; c < n; c++) ns_buf_printf(out, " loc_%d_%d", c / size + 1, c % size + 1);
    ns_buf_puts(out, " - location\n");
    objects(out, "box", "", 1, boxes, "box");
    init_begin(out);
    atom(out, "at-robot loc_%d_%d", robot / size + 1, robot % size + 1);
    for (int b = 0; b < boxes; b++) atom(out, "at box%d loc_%d_%d", b + 1, pos[b] / size + 1, pos[b] % size + 1);
    for (int c = 0; c < n; c++)
        if (floor[c] && box_at[c] < 0) atom(out, "clear loc_%d_%d", c / size + 1, c % size + 1);
    for (int c = 0; c < n; c++) {
        int nbr[4];
        grid_neighbours(size, size, c, nbr);
        for (int d = 0; d < 4 && floor[c]; d++)
            if (nbr[d] >= 0 && floor[nbr[d]])
                atom(out, "adjacent loc_%d_%d loc_%d_%d %s", c / size + 1, c % size + 1, nbr[d] / size + 1,
                     nbr[d] % size + 1, dname[d]);
    }
    goal_begin(out);
    for (int b = 0; b < boxes; b++) atom(out, "at box%d loc_%d_%d", b + 1, goal[b] / size + 1, goal[b] % size + 1);
    goal_end(out);
    free(cells);
    free(order);
    free(pos);
    free(goal);
    free(box_at);
    free(queue);
    free(reach);
    free(floor);
    return NS_OK;
}

/* ------------------------------------------------------------ the tables */

static const ns_gen_option opt_blocksworld[] = {
    {"blocks", 5, 1, "number of blocks"},
    {NULL, 0, 0, NULL}};
static const ns_gen_option opt_gripper[] = {
    {"balls", 4, 1, "number of balls"},
    {"rooms", 2, 2, "number of rooms (IPC: 2)"},
    {"robots", 1, 1, "number of robots (two grippers each)"},
    {"scatter", 0, 0, "0: IPC layout (all start in room1); 1: random start and goal rooms"},
    {NULL, 0, 0, NULL}};
static const ns_gen_option opt_logistics[] = {
    {"cities", 2, 1, "number of cities (one truck each)"},
    {"size", 2, 1, "locations per city, the first an airport"},
    {"airplanes", 1, 1, "number of airplanes"},
    {"packages", 4, 1, "number of packages (each has a goal)"},
    {NULL, 0, 0, NULL}};
static const ns_gen_option opt_visitall[] = {
    {"x", 4, 1, "grid width"},
    {"y", 4, 1, "grid height"},
    {"holes", 0, 0, "cells left out of the grid (kept connected)"},
    {"goals", 100, 0, "percentage of cells that must be visited"},
    {"center", 0, 0, "1: start in the centre cell as in IPC; 0: random start cell"},
    {NULL, 0, 0, NULL}};
static const ns_gen_option opt_depot[] = {
    {"depots", 1, 1, "number of depots"},
    {"distributors", 2, 1, "number of distributors"},
    {"trucks", 2, 1, "number of trucks"},
    {"pallets", 3, 2, "number of pallets (>= depots + distributors)"},
    {"hoists", 3, 2, "number of hoists (>= depots + distributors)"},
    {"crates", 2, 1, "number of crates"},
    {NULL, 0, 0, NULL}};
static const ns_gen_option opt_ferry[] = {
    {"locations", 3, 2, "number of locations"},
    {"cars", 3, 1, "number of cars"},
    {NULL, 0, 0, NULL}};
static const ns_gen_option opt_floortile[] = {
    {"rows", 3, 1, "rows to paint (one more, unpainted, row is added below)"},
    {"columns", 3, 1, "number of columns"},
    {"robots", 2, 1, "number of robots (<= columns)"},
    {NULL, 0, 0, NULL}};
static const ns_gen_option opt_goldminer[] = {
    {"rows", 3, 2, "rows of the mine"},
    {"cols", 3, 2, "columns of the mine"},
    {NULL, 0, 0, NULL}};
static const ns_gen_option opt_grid[] = {
    {"x", 5, 1, "grid width"},
    {"y", 5, 1, "grid height"},
    {"shapes", 1, 1, "number of key/lock shapes"},
    {"keys", 2, 1, "number of keys"},
    {"locks", 2, 0, "number of locked places"},
    {"goals", 100, 0, "percentage of keys with a goal place"},
    {NULL, 0, 0, NULL}};
static const ns_gen_option opt_rovers[] = {
    {"rovers", 2, 1, "number of rovers (one store each)"},
    {"waypoints", 4, 2, "number of waypoints"},
    {"objectives", 2, 1, "number of objectives"},
    {"cameras", 2, 1, "number of cameras"},
    {"goals", 4, 1, "number of goal atoms (at most the achievable ones)"},
    {NULL, 0, 0, NULL}};
static const ns_gen_option opt_satellite[] = {
    {"satellites", 2, 1, "number of satellites"},
    {"instruments", 2, 1, "maximum instruments per satellite"},
    {"modes", 3, 1, "number of modes"},
    {"targets", 4, 1, "number of calibration directions"},
    {"observations", 3, 1, "number of observed directions (one image goal each)"},
    {NULL, 0, 0, NULL}};

static const ns_gen_option opt_spanner[] = {
    {"spanners", 3, 1, "number of spanners (>= nuts)"},
    {"nuts", 2, 1, "number of nuts"},
    {"locations", 3, 1, "locations between the shed and the gate"},
    {NULL, 0, 0, NULL}};
static const ns_gen_option opt_miconic[] = {
    {"passengers", 2, 1, "number of passengers"},
    {"floors", 4, 2, "number of floors"},
    {NULL, 0, 0, NULL}};
static const ns_gen_option opt_childsnack[] = {
    {"children", 4, 1, "number of children"},
    {"allergic", 2, 0, "children allergic to gluten (<= children)"},
    {"trays", 2, 1, "number of trays"},
    {"tables", 3, 1, "number of tables"},
    {"sandwiches", 5, 1, "number of sandwiches (>= children)"},
    {NULL, 0, 0, NULL}};
static const ns_gen_option opt_sokoban[] = {
    {"size", 7, 5, "grid side, border walls included (<= 100)"},
    {"boxes", 2, 1, "number of boxes (each has a goal cell)"},
    {"walls", 15, 0, "percentage of inner cells made walls (the floor kept connected)"},
    {"steps", 20, 0, "random pulls from the solved position (reverse pushes)"},
    {NULL, 0, 0, NULL}};
static const ns_gen_option opt_transport[] = {
    {"vehicles", 2, 1, "number of vehicles"},
    {"packages", 3, 0, "number of packages (each has a goal)"},
    {"locations", 5, 1, "number of locations"},
    {"capacity", 2, 1, "largest room of a vehicle (sizes c0 … cC)"},
    {"roads", 3, 0, "two-way roads beyond the spanning tree's L - 1"},
    {NULL, 0, 0, NULL}};

typedef struct gen_domain {
    const char *name;
    const char *pddl; /* the domain name inside the PDDL files */
    const ns_gen_option *opts;
    gen_fn fn;
} gen_domain;

static const gen_domain domains[] = {
    {"blocksworld", "blocksworld-4ops", opt_blocksworld, gen_blocksworld},
    {"gripper", "gripper-strips", opt_gripper, gen_gripper},
    {"logistics", "logistics-strips", opt_logistics, gen_logistics},
    {"visitall", "grid-visit-all", opt_visitall, gen_visitall},
    {"depot", "depots", opt_depot, gen_depot},
    {"ferry", "ferry", opt_ferry, gen_ferry},
    {"floortile", "floor-tile", opt_floortile, gen_floortile},
    {"goldminer", "gold-miner-typed", opt_goldminer, gen_goldminer},
    {"grid", "grid", opt_grid, gen_grid},
    {"rovers", "rover", opt_rovers, gen_rovers},
    {"satellite", "satellite", opt_satellite, gen_satellite},
    {"spanner", "spanner", opt_spanner, gen_spanner},
    {"miconic", "miconic", opt_miconic, gen_miconic},
    {"childsnack", "childsnack", opt_childsnack, gen_childsnack},
    {"transport", "transport", opt_transport, gen_transport},
    {"sokoban", "sokoban", opt_sokoban, gen_sokoban},
};
#define NDOMAINS ((int)(sizeof domains / sizeof domains[0]))

static const char *const domain_names[] = {"blocksworld", "gripper", "logistics", "visitall",
                                           "depot", "ferry", "floortile", "goldminer",
                                           "grid", "rovers", "satellite", "spanner",
                                           "miconic", "childsnack", "transport", "sokoban", NULL};

const char *const *ns_gen_domains(void) { return domain_names; }

static const gen_domain *find_domain(const char *name)
{
    for (int i = 0; name && i < NDOMAINS; i++)
        if (strcmp(domains[i].name, name) == 0) return &domains[i];
    return NULL;
}

const ns_gen_option *ns_gen_options(const char *domain)
{
    const gen_domain *g = find_domain(domain);
    return g ? g->opts : NULL;
}

ns_status ns_gen_problem(const char *domain, const ns_gen_arg *args, int nargs, uint64_t seed,
                         const char *name, ns_buf *out, ns_error *err)
{
    const gen_domain *g = find_domain(domain);
    if (!g) {
        char known[256] = "";
        for (int i = 0; i < NDOMAINS; i++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
                     domains[i].name);
        return bad(err, "unknown generator domain '%s' (known: %s)", domain ? domain : "(null)", known);
    }
    int nopt = 0, val[16];
    while (g->opts[nopt].name) {
        val[nopt] = g->opts[nopt].def;
        nopt++;
    }
    for (int a = 0; a < nargs; a++) {
        int o = 0;
        while (o < nopt && strcmp(g->opts[o].name, args[a].name ? args[a].name : "") != 0) o++;
        if (o == nopt) {
            char known[256] = "";
            for (int i = 0; i < nopt; i++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
                         g->opts[i].name);
            return bad(err, "%s: unknown option '%s' (options: %s)", g->name,
                       args[a].name ? args[a].name : "(null)", known);
        }
        if (args[a].value < g->opts[o].min)
            return bad(err, "%s: %s must be >= %d (got %d)", g->name, g->opts[o].name, g->opts[o].min,
                       args[a].value);
        if (args[a].value > GEN_MAX_VALUE)
            return bad(err, "%s: %s must be <= %d (got %d)", g->name, g->opts[o].name, GEN_MAX_VALUE,
                       args[a].value);
        val[o] = args[a].value;
    }

    ns_rng rng;
    ns_rng_seed(&rng, seed);
    ns_buf body;
    ns_buf_init(&body);
    ns_status st = g->fn(val, &rng, &body, err);
    if (st != NS_OK) {
        ns_buf_free(&body);
        return st;
    }
    ns_buf_printf(out, ";; Generated by nextstate gen %s (seed %llu", g->name, (unsigned long long)seed);
    for (int o = 0; o < nopt; o++) ns_buf_printf(out, ", %s %d", g->opts[o].name, val[o]);
    ns_buf_puts(out, ").\n");
    if (name)
        ns_buf_printf(out, "(define (problem %s)\n", name);
    else
        ns_buf_printf(out, "(define (problem %s-%llu)\n", g->name, (unsigned long long)seed);
    ns_buf_printf(out, "  (:domain %s)\n", g->pddl);
    ns_buf_put(out, body.data, body.len);
    ns_buf_puts(out, ")\n");
    ns_buf_free(&body);
    return NS_OK;
}
