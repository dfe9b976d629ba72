/*
 * dtype_flat.c: a committed type's flattened form (see dtype_impl.h), and the walks over a
 * type's layout: packing, unpacking, counting elements, visiting runs of basic elements.
 */
#include "dtype_impl.h"
#include <stdlib.h>
#include <string.h>

/* Address arithmetic through integers: buffers may be MPI_BOTTOM (NULL) with absolute
 * displacements, and pointer arithmetic on NULL is undefined. */
static char *at(const void *base, MPI_Aint off)
{
    return (char *)((uintptr_t)base + (uintptr_t)off);
}

/* --- building the segment list ---------------------------------------------------------- */

struct seglist {
    struct dt_seg *v;
    size_t n, cap;
    size_t work; /* segments pushed, merged or not: bounds the time spent */
    int fail;    /* too long, or out of memory: the type keeps no list */
};

/* A run of equal blocks one block apart is one block. */
static void seg_norm(struct dt_seg *s)
{
    if (s->count > 1 && s->stride == (MPI_Aint)s->len) {
        s->len *= s->count;
        s->count = 1;
    }
    if (s->count == 1)
        s->stride = 0;
}

/* Appends s, merged into the last segment when it continues it: adjacent to it, or one
 * more step of its stride. Only equal units merge (see dtype_impl.h). */
static void seg_push(struct seglist *L, struct dt_seg s)
{
    if (L->fail || s.count == 0 || s.len == 0)
        return;
    if (++L->work > 16 * (size_t)DT_MAX_SEGS) {
        L->fail = 1;
        return;
    }
    seg_norm(&s);
    if (L->n > 0) {
        struct dt_seg *t = &L->v[L->n - 1];
        if (t->unit == s.unit) {
            if (t->count == 1 && s.count == 1 && t->disp + (MPI_Aint)t->len == s.disp) {
                t->len += s.len;
                return;
            }
            if (t->len == s.len && t->count == 1 && s.count == 1) {
                t->stride = s.disp - t->disp;
                t->count = 2;
                seg_norm(t);
                return;
            }
            if (t->len == s.len && t->count > 1 &&
                s.disp == t->disp + (MPI_Aint)t->count * t->stride &&
                (s.count == 1 || s.stride == t->stride)) {
                t->count += s.count;
                return;
            }
            if (t->len == s.len && t->count == 1 && s.count > 1 && s.disp - t->disp == s.stride) {
                t->count = s.count + 1;
                t->stride = s.stride;
                return;
            }
        }
    }
    if (L->n == L->cap) {
        size_t cap = L->cap ? 2 * L->cap : 8;
        struct dt_seg *v = cap > DT_MAX_SEGS ? NULL : realloc(L->v, cap * sizeof *v);
        if (!v) {
            L->fail = 1;
            return;
        }
        L->v = v, L->cap = cap;
    }
    L->v[L->n++] = s;
}

/* Appends b elements of c from displacement d. */
static void seg_block(struct seglist *L, MPI_Aint d, size_t b, MPI_Datatype c)
{
    if (L->fail || b == 0 || c->size == 0)
        return;
    dt_flatten(c);
    if (!c->segs) {
        L->fail = 1;
        return;
    }
    MPI_Aint ext = c->ub - c->lb;
    const struct dt_seg *s = c->segs;
    if (c->nsegs == 1 && s->count == 1) { /* one block per element: b blocks, ext apart */
        seg_push(L, (struct dt_seg){d + s->disp, ext, s->len, b, s->unit});
        return;
    }
    if (c->nsegs == 1 && s->stride * (MPI_Aint)s->count == ext) { /* the stride goes on */
        seg_push(L, (struct dt_seg){d + s->disp, s->stride, s->len, s->count * b, s->unit});
        return;
    }
    if (b > DT_MAX_SEGS || b * c->nsegs > 16 * (size_t)DT_MAX_SEGS) {
        L->fail = 1;
        return;
    }
    for (size_t k = 0; k < b && !L->fail; k++)
        for (size_t i = 0; i < c->nsegs; i++) {
            struct dt_seg g = s[i];
            g.disp += d + (MPI_Aint)k * ext;
            seg_push(L, g);
        }
}

/* Contiguous: the segments follow each other from lb and fill the extent. */
static int seg_contig(MPI_Datatype t)
{
    if (t->size == 0)
        return 1;
    if (!t->segs || (MPI_Aint)t->size != t->ub - t->lb || t->segs[0].disp != t->lb)
        return 0;
    for (size_t i = 0; i < t->nsegs; i++) {
        const struct dt_seg *s = &t->segs[i];
        if (s->count != 1 || (i + 1 < t->nsegs && s->disp + (MPI_Aint)s->len != s[1].disp))
            return 0;
    }
    return 1;
}

/* Task context. */
void dt_flatten(MPI_Datatype t)
{
    struct seglist L = {0};
    size_t nb, j = 0;

    if (t->flat)
        return;
    nb = dt_nblocks(t);
    if ((t->combiner == MPI_COMBINER_VECTOR || t->combiner == MPI_COMBINER_HVECTOR) && nb > 1) {
        /* All blocks alike: if one block is one piece, the vector is one strided segment
         * (a matrix column), found without pushing every block. */
        MPI_Aint d0, d1;
        size_t b;
        MPI_Datatype c;
        dt_block(t, 0, &d0, &b, &c);
        dt_block(t, 1, &d1, &b, &c);
        seg_block(&L, d0, b, c);
        j = 1;
        if (!L.fail && L.n == 1 && L.v[0].count == 1) {
            L.v[0].count = nb;
            L.v[0].stride = d1 - d0;
            seg_norm(&L.v[0]);
            j = nb;
        }
    }
    for (; j < nb && !L.fail; j++) {
        MPI_Aint d;
        size_t b;
        MPI_Datatype c;
        dt_block(t, j, &d, &b, &c);
        seg_block(&L, d, b, c);
    }
    if (L.fail) {
        free(L.v);
        L.v = NULL, L.n = 0;
    } else if (L.n == 0) {
        free(L.v);
        L.v = t->inl; /* an empty type: a list of no segments */
    } else if (L.n < L.cap) {
        struct dt_seg *v = realloc(L.v, L.n * sizeof *v);
        L.v = v ? v : L.v;
    }
    t->segs = L.v;
    t->nsegs = L.n;
    t->contig = seg_contig(t);
    t->flat = 1;
}

/* --- walking a layout ------------------------------------------------------------------- */

enum { W_PACK, W_UNPACK, W_COUNT, W_BYTES };

struct walker {
    int mode;
    const void *base; /* the user's buffer */
    char *p;          /* packed data: next byte */
    size_t left;      /* packed bytes still to go (W_BYTES: basic elements) */
    size_t elems;     /* W_COUNT: basic elements seen; W_BYTES: bytes seen */
};

/* One block of len bytes at base + off. Near the end of the packed bytes only whole basic
 * elements are moved; returns 0 once the packed bytes are used up before the block ends. */
static int w_block(struct walker *w, MPI_Aint off, size_t len, size_t unit)
{
    if (w->mode == W_BYTES) { /* counting bytes of w->left more basic elements */
        size_t k = len / unit <= w->left ? len / unit : w->left;
        w->elems += k * unit;
        w->left -= k;
        return w->left > 0;
    }
    size_t n = len <= w->left ? len : w->left / unit * unit;
    if (w->mode == W_PACK)
        memcpy(w->p, at(w->base, off), n);
    else if (w->mode == W_UNPACK)
        memcpy(at(w->base, off), w->p, n);
    else
        w->elems += n / unit;
    if (w->mode != W_COUNT)
        w->p += n;
    w->left -= n;
    return n == len;
}

/* memcpy with the common element sizes spelled out: the compiler makes those single
 * moves instead of calls (a vector of doubles is a block of 8 bytes per element). */
static void copy(void *dst, const void *src, size_t n)
{
    switch (n) {
    case 1:
        memcpy(dst, src, 1);
        break;
    case 2:
        memcpy(dst, src, 2);
        break;
    case 4:
        memcpy(dst, src, 4);
        break;
    case 8:
        memcpy(dst, src, 8);
        break;
    case 16:
        memcpy(dst, src, 16);
        break;
    default:
        memcpy(dst, src, n);
        break;
    }
}

/* The whole of count elements through their segments: no budget to watch. */
static void whole_segs(struct walker *w, MPI_Datatype t, size_t count, MPI_Aint off)
{
    MPI_Aint ext = t->ub - t->lb;
    char *p = w->p;
    for (size_t i = 0; i < count; i++, off += ext)
        for (size_t s = 0; s < t->nsegs; s++) {
            const struct dt_seg *g = &t->segs[s];
            MPI_Aint a = off + g->disp;
            for (size_t k = 0; k < g->count; k++, a += g->stride, p += g->len) {
                if (w->mode == W_PACK)
                    copy(p, at(w->base, a), g->len);
                else
                    copy(at(w->base, a), p, g->len);
            }
        }
    w->left -= (size_t)(p - w->p);
    w->p = p;
}

/* count elements of t from offset off: through the segments if t has them, else through
 * its constructor's blocks. Returns 0 when the packed bytes ran out. */
static int walk(struct walker *w, MPI_Datatype t, size_t count, MPI_Aint off)
{
    MPI_Aint ext = t->ub - t->lb;
    if (t->segs && w->mode <= W_UNPACK && w->left >= count * t->size) {
        whole_segs(w, t, count, off);
        return 1;
    }
    if (t->segs) {
        for (size_t i = 0; i < count; i++, off += ext)
            for (size_t s = 0; s < t->nsegs; s++) {
                const struct dt_seg *g = &t->segs[s];
                MPI_Aint a = off + g->disp;
                for (size_t k = 0; k < g->count; k++, a += g->stride)
                    if (!w_block(w, a, g->len, g->unit))
                        return 0;
            }
        return 1;
    }
    size_t nb = dt_nblocks(t);
    for (size_t i = 0; i < count; i++, off += ext)
        for (size_t j = 0; j < nb; j++) {
            MPI_Aint d;
            size_t b;
            MPI_Datatype c;
            dt_block(t, j, &d, &b, &c);
            if (b && c->size && !walk(w, c, b, off + d))
                return 0;
        }
    return 1;
}

/* Task context. */
void dt_pack(const void *buf, int count, MPI_Datatype dt, void *out)
{
    size_t bytes = (size_t)count * dt->size;
    if (bytes == 0)
        return;
    if (dt_contig(dt)) {
        memcpy(out, at(buf, dt->lb), bytes);
        return;
    }
    struct walker w = {W_PACK, buf, out, bytes, 0};
    walk(&w, dt, (size_t)count, 0);
}

/* Task context. */
void dt_unpack(const void *in, size_t bytes, void *buf, int count, MPI_Datatype dt)
{
    if (bytes == 0)
        return;
    if (dt_contig(dt) && bytes == (size_t)count * dt->size) {
        memcpy(at(buf, dt->lb), in, bytes);
        return;
    }
    struct walker w = {W_UNPACK, buf, (char *)in, bytes, 0};
    walk(&w, dt, (size_t)count, 0);
}

/* Task context. */
int dt_count_elements(MPI_Datatype dt, size_t bytes, size_t *elems)
{
    *elems = 0;
    if (dt->size == 0)
        return bytes == 0;
    size_t whole = bytes / dt->size, rest = bytes % dt->size;
    struct walker w = {W_COUNT, NULL, NULL, rest, 0};
    if (rest)
        walk(&w, dt, 1, 0);
    *elems = whole * dt->nbasic + w.elems;
    return w.left == 0;
}

/* Task context. */
size_t dt_elements_bytes(MPI_Datatype dt, size_t elems)
{
    if (dt->nbasic == 0)
        return 0;
    size_t whole = elems / dt->nbasic, rest = elems % dt->nbasic;
    struct walker w = {W_BYTES, NULL, NULL, rest, 0};
    if (rest)
        walk(&w, dt, 1, 0);
    return whole * dt->size + w.elems;
}

/* --- runs of basic elements ------------------------------------------------------------- */

static void runs(MPI_Datatype t, size_t count, MPI_Aint off,
                 void (*fn)(void *, MPI_Aint, MPI_Datatype, size_t), void *ctx)
{
    MPI_Datatype b = t->basic;
    if (count == 0 || t->size == 0)
        return;
    if (t->predefined) {
        fn(ctx, off, t, count);
        return;
    }
    if (b && b->size == (size_t)(b->ub - b->lb) && dt_contig(t)) {
        fn(ctx, off + t->lb, b, count * t->size / b->size);
        return;
    }
    MPI_Aint ext = t->ub - t->lb;
    size_t nb = dt_nblocks(t);
    for (size_t i = 0; i < count; i++, off += ext)
        for (size_t j = 0; j < nb; j++) {
            MPI_Aint d;
            size_t n;
            MPI_Datatype c;
            dt_block(t, j, &d, &n, &c);
            runs(c, n, off + d, fn, ctx);
        }
}

/* Task context. */
void dt_runs(MPI_Datatype dt, size_t count,
             void (*fn)(void *ctx, MPI_Aint off, MPI_Datatype leaf, size_t n), void *ctx)
{
    runs(dt, count, 0, fn, ctx);
}
