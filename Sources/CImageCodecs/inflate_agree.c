/* Where libdeflate and zlib disagree on a deflate stream, and a walk over a
   stream that libdeflate inflated which finds those places.

   libdeflate (1.14) accepts every stream zlib (1.2.13) accepts and inflates
   it to the same bytes, but it also accepts a few that zlib refuses
   (libdeflate: lib/deflate_decompress.c build_decode_table and the
   offset/length tables, lib/decompress_template.h; zlib: inflate.c inflate,
   states TABLE and CODELENS, inftrees.c inflate_table, inffixed.h):
   - a dynamic block header with more than 286 literal/length or 30
     distance codes: zlib "too many length or distance symbols";
   - a code length repeat that runs past the last length: zlib "invalid bit
     length repeat" (libdeflate ignores the overrun);
   - a precode with a single codeword of length 1: zlib "invalid code
     lengths set" (libdeflate allows it);
   - the literal/length symbols 286 and 287 and the distance symbols 30 and
     31 of the fixed code: zlib "invalid literal/length code" / "invalid
     distance code" (libdeflate reads them as length 258 and distance
     24577 + extra bits);
   - a literal/length or distance code of a single codeword of length 1:
     zlib decodes only the codeword 0 and refuses 1, libdeflate decodes both
     to the symbol; an empty distance code: zlib refuses any match,
     libdeflate reads one as distance 1.
   None of these leaves a trace in the output (the Adler-32 of the output
   can still match), so after libdeflate succeeded the stream is walked
   once more here, block by block: every symbol is decoded (its codeword and
   extra bits skipped, nothing produced), and the stream passes only when
   none of the above occurs and it ends where libdeflate said it ends.
   Anything else unusual also fails the walk: the caller then asks zlib,
   which is always right, so a false alarm only costs time.

   Written by hand because neither library reports the block headers or
   codes of a stream it inflated. Distances are not looked at: libdeflate
   refused any that reaches before the first output byte, which is all zlib
   checks when its window holds the whole output or 32 KiB (png_validate.c
   makes sure it does). */
#include <pthread.h>
#include <string.h>
#include "inflate_agree.h"

enum { IW_MAXBITS = 15, IW_LIT_BITS = 10, IW_DIST_BITS = 9, IW_PRE_BITS = 7 };

/* A table entry: bits 0-7 bits to consume (codeword and extra bits), 8-10
   kind, 16-28 the symbol; bit 31 marks literals, bit 30 the kinds other
   than a symbol, so the hot loop tests one bit for each. */
enum { IW_SYM = 0, IW_EOB = 1, IW_LONG = 2, IW_BAD = 3 };
#define IW_LITERAL 0x80000000u
#define IW_EXCEPTIONAL 0x40000000u
#define IW_ENTRY(kind, sym, bits)                                                                     \
    ((kind) == IW_SYM ? 0u : IW_EXCEPTIONAL) | (uint32_t)(sym) << 16 | (uint32_t)(kind) << 8 | (uint32_t)(bits)
#define IW_KIND(e) (((e) >> 8) & 7u)
#define IW_SYMBOL(e) (((e) >> 16) & 0x1FFFu)

typedef enum { IW_PRECODE, IW_LITLEN, IW_DIST } iw_code_kind;

/* Extra bits of the length symbols 257..285 and distance symbols 0..29
   (RFC 1951, 3.2.5). */
static const uint8_t iw_len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                         2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint8_t iw_dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
                                          6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

typedef struct {
    uint32_t table[1u << IW_LIT_BITS];
    unsigned table_bits;
    iw_code_kind kind;
    uint16_t count[IW_MAXBITS + 1];
    uint16_t sym[288];  /* symbols by codeword length, then value */
} iw_code;

/* The entry of a symbol of codeword length len, as zlib reads it: symbols
   zlib has no meaning for are BAD. */
static uint32_t iw_entry(iw_code_kind kind, unsigned sym, unsigned len) {
    switch (kind) {
    case IW_PRECODE: return IW_ENTRY(IW_SYM, sym, len);
    case IW_LITLEN:
        if (sym < 256) return IW_LITERAL | IW_ENTRY(IW_SYM, sym, len);
        if (sym == 256) return IW_ENTRY(IW_EOB, sym, len);
        if (sym <= 285) return IW_ENTRY(IW_SYM, sym, len + iw_len_extra[sym - 257]);
        return IW_ENTRY(IW_BAD, 0, 0);
    default:
        return sym < 30 ? IW_ENTRY(IW_SYM, sym, len + iw_dist_extra[sym]) : IW_ENTRY(IW_BAD, 0, 0);
    }
}

/* The len low bits of v in reverse order. */
static inline uint32_t iw_reverse(uint32_t v, unsigned len) {
    v = ((v >> 1) & 0x5555u) | ((v & 0x5555u) << 1);
    v = ((v >> 2) & 0x3333u) | ((v & 0x3333u) << 2);
    v = ((v >> 4) & 0x0F0Fu) | ((v & 0x0F0Fu) << 4);
    v = ((v >> 8) & 0x00FFu) | ((v & 0x00FFu) << 8);
    return v >> (16 - len);
}

/* Builds the decoding table of n codeword lengths; -1 when zlib's
   inflate_table refuses them as this kind of code, 0 for a complete code,
   1 for the incomplete ones zlib takes for literal/length and distance
   codes (a single codeword of length 1, or none at all). Codewords zlib
   has no symbol for decode to BAD. */
static int iw_code_build(iw_code *c, const uint8_t *lens, unsigned n, iw_code_kind kind, unsigned table_bits) {
    c->kind = kind;
    c->table_bits = table_bits;
    memset(c->count, 0, sizeof c->count);
    for (unsigned i = 0; i < n; i++) c->count[lens[i]]++;
    c->count[0] = 0;
    int left = 1;
    unsigned max = 0;
    for (unsigned len = 1; len <= IW_MAXBITS; len++) {
        left = (left << 1) - c->count[len];
        if (left < 0) return -1;  /* over-subscribed */
        if (c->count[len]) max = len;
    }
    if (left > 0 && (kind == IW_PRECODE || max > 1)) return -1;  /* incomplete */
    uint16_t offs[IW_MAXBITS + 2];
    offs[1] = 0;
    for (unsigned len = 1; len <= IW_MAXBITS; len++) offs[len + 1] = (uint16_t)(offs[len] + c->count[len]);
    for (unsigned i = 0; i < n; i++)
        if (lens[i]) c->sym[offs[lens[i]]++] = (uint16_t)i;
    /* A complete code covers every entry (with a codeword or the prefix of
       a longer one); only an incomplete one leaves entries zlib refuses. */
    const uint32_t size = 1u << table_bits, bad = IW_ENTRY(IW_BAD, 0, 0);
    if (left > 0)
        for (uint32_t i = 0; i < size; i++) c->table[i] = bad;
    /* Canonical codewords (RFC 1951, 3.2.2), stored bit-reversed: the
       stream gives a codeword's first bit first. */
    uint32_t next[IW_MAXBITS + 1];
    uint32_t code = 0;
    for (unsigned len = 1; len <= IW_MAXBITS; len++) {
        next[len] = code;
        code = (code + c->count[len]) << 1;
    }
    for (unsigned i = 0; i < n; i++) {
        unsigned len = lens[i];
        if (!len) continue;
        uint32_t rev = iw_reverse(next[len]++, len);
        if (len <= table_bits) {
            uint32_t e = iw_entry(kind, i, len);
            for (uint32_t r = rev; r < size; r += 1u << len) c->table[r] = e;
        } else {
            c->table[rev & (size - 1)] = IW_ENTRY(IW_LONG, 0, 0);
        }
    }
    return left > 0;
}

/* A codeword longer than the table: one bit at a time over the canonical
   code (as zlib's contrib/puff decode() does). */
static uint32_t iw_code_long(const iw_code *c, uint64_t bits) {
    int code = 0, first = 0, index = 0;
    for (unsigned len = 1; len <= IW_MAXBITS; len++) {
        code |= (int)((bits >> (len - 1)) & 1u);
        int count = c->count[len];
        if (code - count < first) return iw_entry(c->kind, c->sym[index + (code - first)], len);
        index += count;
        first = (first + count) << 1;
        code <<= 1;
    }
    return IW_ENTRY(IW_BAD, 0, 0);
}

/* LSB-first bits over [p, end); past the end, zero bytes are counted in
   `pad` (a walk that consumes one fails). */
typedef struct {
    const uint8_t *p, *end;
    uint64_t buf;
    unsigned n;
    unsigned pad;
} iw_bitin;

/* At least 56 bits in buf; 0 when the walk ran far past the end. */
static inline int iw_refill(iw_bitin *b) {
    if (b->end - b->p >= 8) {
        uint64_t v;
        memcpy(&v, b->p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        v = __builtin_bswap64(v);
#endif
        /* Whole bytes only; the bits above n are the next bytes again,
           which the next refill ORs in unchanged. */
        b->buf |= v << b->n;
        b->p += (63 - b->n) >> 3;
        b->n |= 56;
        return 1;
    }
    while (b->n <= 56) {
        uint64_t byte = 0;
        if (b->p < b->end) byte = *b->p++;
        else if (++b->pad > 16) return 0;
        b->buf |= byte << b->n;
        b->n += 8;
    }
    return 1;
}

static inline void iw_drop(iw_bitin *b, unsigned k) {
    b->buf >>= k;
    b->n -= k;
}

/* The byte the walk stands at after dropping the bits of a partial byte;
   NULL when it has consumed bytes past the end. */
static const uint8_t *iw_byte_position(iw_bitin *b) {
    iw_drop(b, b->n & 7u);
    if (b->pad > b->n / 8) return NULL;
    return b->p - (b->n / 8 - b->pad);
}

typedef struct {
    iw_code lit, dist, pre;
    uint8_t lens[286 + 30 + 138];
} iw_walk;

/* A dynamic block's header, as zlib's inflate reads it: -1 when zlib
   might refuse it, 0 when its codes are complete, 1 when one of them is
   not (a codeword zlib refuses can then occur in the block). */
static int iw_dynamic_header(iw_walk *w, iw_bitin *b) {
    static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    if (!iw_refill(b)) return -1;
    unsigned nlen = 257 + (unsigned)(b->buf & 31), ndist = 1 + (unsigned)((b->buf >> 5) & 31);
    unsigned ncode = 4 + (unsigned)((b->buf >> 10) & 15);
    iw_drop(b, 14);
    if (nlen > 286 || ndist > 30) return -1;
    uint8_t pre[19] = {0};
    for (unsigned i = 0; i < ncode; i++) {
        if (b->n < 3 && !iw_refill(b)) return -1;
        pre[order[i]] = (uint8_t)(b->buf & 7);
        iw_drop(b, 3);
    }
    if (iw_code_build(&w->pre, pre, 19, IW_PRECODE, IW_PRE_BITS) != 0) return -1;
    unsigned have = 0, total = nlen + ndist;
    while (have < total) {
        if (b->n < 16 && !iw_refill(b)) return -1;
        uint32_t e = w->pre.table[b->buf & ((1u << IW_PRE_BITS) - 1)];
        if (IW_KIND(e) != IW_SYM) return -1;
        iw_drop(b, e & 0xFF);
        unsigned sym = IW_SYMBOL(e), rep;
        uint8_t value = 0;
        if (sym < 16) {
            w->lens[have++] = (uint8_t)sym;
            continue;
        }
        if (sym == 16) {
            if (have == 0) return -1;
            value = w->lens[have - 1];
            rep = 3 + (unsigned)(b->buf & 3);
            iw_drop(b, 2);
        } else if (sym == 17) {
            rep = 3 + (unsigned)(b->buf & 7);
            iw_drop(b, 3);
        } else {
            rep = 11 + (unsigned)(b->buf & 127);
            iw_drop(b, 7);
        }
        if (have + rep > total) return -1;
        memset(w->lens + have, value, rep);
        have += rep;
    }
    if (w->lens[256] == 0) return -1;  /* zlib: "invalid code -- missing end-of-block" */
    int lit = iw_code_build(&w->lit, w->lens, nlen, IW_LITLEN, IW_LIT_BITS);
    int dist = iw_code_build(&w->dist, w->lens + nlen, ndist, IW_DIST, IW_DIST_BITS);
    return lit < 0 || dist < 0 ? -1 : lit | dist;
}

/* The fixed codes (RFC 1951, 3.2.6), built once for every thread and only
   read afterwards. */
static iw_code iw_fixed_lit, iw_fixed_dist;
static pthread_once_t iw_fixed_once = PTHREAD_ONCE_INIT;

static void iw_build_fixed_codes(void) {
    uint8_t lens[288 + 32];
    memset(lens, 8, 144);
    memset(lens + 144, 9, 112);
    memset(lens + 256, 7, 24);
    memset(lens + 280, 8, 8);
    memset(lens + 288, 5, 32);
    iw_code_build(&iw_fixed_lit, lens, 288, IW_LITLEN, IW_LIT_BITS);
    iw_code_build(&iw_fixed_dist, lens + 288, 32, IW_DIST, IW_DIST_BITS);
}

/* The symbols of one Huffman block up to its end-of-block code. The bit
   buffer lives in locals here (the hot loop of the walk): literals from
   the table, up to three per refill, cost a lookup and a shift each; a
   match two lookups. */
static int iw_huffman_block(const iw_code *litcode, const iw_code *distcode, iw_bitin *b) {
    const uint32_t *lit = litcode->table, *dist = distcode->table;
    const uint64_t lit_mask = (1u << IW_LIT_BITS) - 1, dist_mask = (1u << IW_DIST_BITS) - 1;
    uint64_t buf = b->buf;
    unsigned n = b->n;
    for (;;) {
        /* 48 bits cover a length (15 + 5) and a distance (15 + 13), or
           three literals of the table (10 bits each). */
        if (n < 48) {
            b->buf = buf;
            b->n = n;
            if (!iw_refill(b)) return 0;
            buf = b->buf;
            n = b->n;
        }
        uint32_t e = lit[buf & lit_mask];
        if (e & IW_LITERAL) {
            buf >>= e & 0xFF;
            n -= e & 0xFF;
            e = lit[buf & lit_mask];
            if (!(e & IW_LITERAL)) continue;
            buf >>= e & 0xFF;
            n -= e & 0xFF;
            e = lit[buf & lit_mask];
            if (!(e & IW_LITERAL)) continue;
            buf >>= e & 0xFF;
            n -= e & 0xFF;
            continue;
        }
        if (e & IW_EXCEPTIONAL) {
            if (IW_KIND(e) == IW_LONG) e = iw_code_long(litcode, buf);
            if (IW_KIND(e) == IW_BAD) return 0;
            buf >>= e & 0xFF;
            n -= e & 0xFF;
            if (IW_KIND(e) == IW_EOB) break;
            if (e & IW_LITERAL) continue;
        } else {
            buf >>= e & 0xFF;
            n -= e & 0xFF;
        }
        e = dist[buf & dist_mask];
        if (e & IW_EXCEPTIONAL) {
            if (IW_KIND(e) == IW_LONG) e = iw_code_long(distcode, buf);
            if (IW_KIND(e) == IW_BAD) return 0;
        }
        buf >>= e & 0xFF;
        n -= e & 0xFF;
    }
    b->buf = buf;
    b->n = n;
    return 1;
}

int iw_zlib_agrees(const uint8_t *stream, size_t len) {
    if (len < 2 + 1 + 4) return 0;
    iw_walk w;
    iw_bitin b = {stream + 2, stream + len - 4, 0, 0, 0};
    int final = 0;
    while (!final) {
        if (!iw_refill(&b)) return 0;
        final = (int)(b.buf & 1);
        unsigned type = (unsigned)((b.buf >> 1) & 3);
        iw_drop(&b, 3);
        if (type == 0) {
            /* Stored: byte-aligned LEN, NLEN (its complement), LEN bytes. */
            const uint8_t *at = iw_byte_position(&b);
            if (!at || b.end - at < 4) return 0;
            unsigned n = (unsigned)at[0] | (unsigned)at[1] << 8, ncomp = (unsigned)at[2] | (unsigned)at[3] << 8;
            if (n != (~ncomp & 0xFFFFu) || (size_t)(b.end - at - 4) < n) return 0;
            b.p = at + 4 + n;
            b.buf = 0;
            b.n = 0;
            b.pad = 0;
            continue;
        }
        if (type == 3) return 0;
        if (type == 1) {
            pthread_once(&iw_fixed_once, iw_build_fixed_codes);
            if (!iw_huffman_block(&iw_fixed_lit, &iw_fixed_dist, &b)) return 0;
        } else {
            int header = iw_dynamic_header(&w, &b);
            if (header < 0) return 0;
            /* The last block with complete codes: every codeword means the
               same symbol to both libraries, so its symbols need no walk
               (a PNG thumbnail's data is often one block). */
            if (final && header == 0) return 1;
            if (!iw_huffman_block(&w.lit, &w.dist, &b)) return 0;
        }
    }
    /* The Adler-32 follows the last block's byte; libdeflate read it at
       the same place. */
    return iw_byte_position(&b) == stream + len - 4;
}
