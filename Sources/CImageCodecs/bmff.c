/* The one ISO-BMFF box walk (iw_bmff_box_at), which the Swift header
   reader (ContainerHeaders.swift) and the C validators (bmff.h,
   avif_validate.c) both step with, and the largest size the decoders of
   a file will decode at (iw_bmff_largest_coded_size). */
#include "bmff.h"

int iw_bmff_box_at(const uint8_t *data, size_t end, size_t pos, iw_box *box) {
    memset(box, 0, sizeof *box);
    if (pos >= end) return IW_BOX_END;
    box->offset = pos;
    if (end - pos < 8) return IW_BOX_HEADER_CUT;
    memcpy(box->type, data + pos + 4, 4);
    uint64_t size = iw_be32(data + pos);
    size_t header = 8;
    if (size == 1) {
        if (end - pos < 16) return IW_BOX_LARGESIZE_CUT;
        size = ((uint64_t)iw_be32(data + pos + 8) << 32) | iw_be32(data + pos + 12);
        header = 16;
    } else if (size == 0) {
        size = end - pos;
    }
    box->size = size;
    box->payload = pos + header;
    if (size < header) return IW_BOX_TOO_SMALL;
    if (size > end - pos) return IW_BOX_PAST_END;
    box->end = pos + (size_t)size;
    return IW_BOX_OK;
}

/* ---- HEVC: the coded size in a sequence parameter set ----------------- */

typedef struct {
    uint8_t rbsp[256]; /* enough for every field up to the picture size */
    size_t len, bit;
    int bad;
} iw_bits;

static uint32_t iw_bits_u(iw_bits *b, unsigned n) {
    uint32_t v = 0;
    for (unsigned k = 0; k < n; k++) {
        if (b->bit >= b->len * 8) { b->bad = 1; return 0; }
        v = (v << 1) | ((b->rbsp[b->bit >> 3] >> (7 - (b->bit & 7))) & 1);
        b->bit++;
    }
    return v;
}

static uint32_t iw_bits_ue(iw_bits *b) {
    unsigned zeros = 0;
    while (!b->bad && iw_bits_u(b, 1) == 0) {
        if (++zeros > 31) { b->bad = 1; return 0; }
    }
    if (b->bad) return 0;
    return (uint32_t)(((uint64_t)1 << zeros) - 1 + iw_bits_u(b, zeros));
}

/* H.265 7.3.2.2 seq_parameter_set_rbsp up to pic_height_in_luma_samples,
   with profile_tier_level (7.3.3); the NAL unit's emulation prevention
   bytes (00 00 03) removed first. 1 when the size was read. */
static int iw_hevc_sps_size(const uint8_t *nal, size_t n, uint32_t *w, uint32_t *h) {
    iw_bits b;
    memset(&b, 0, sizeof b);
    unsigned zeros = 0;
    for (size_t i = 2; i < n && b.len < sizeof b.rbsp; i++) {
        if (zeros >= 2 && nal[i] == 3) { zeros = 0; continue; }
        zeros = nal[i] == 0 ? zeros + 1 : 0;
        b.rbsp[b.len++] = nal[i];
    }
    iw_bits_u(&b, 4); /* sps_video_parameter_set_id */
    unsigned sub_layers = iw_bits_u(&b, 3);
    iw_bits_u(&b, 1);
    iw_bits_u(&b, 32); iw_bits_u(&b, 32); iw_bits_u(&b, 32); /* general profile, 96 bits */
    unsigned profile_present[8] = {0}, level_present[8] = {0};
    for (unsigned i = 0; i < sub_layers; i++) {
        profile_present[i] = iw_bits_u(&b, 1);
        level_present[i] = iw_bits_u(&b, 1);
    }
    if (sub_layers > 0)
        for (unsigned i = sub_layers; i < 8; i++) iw_bits_u(&b, 2);
    for (unsigned i = 0; i < sub_layers; i++) {
        if (profile_present[i]) { iw_bits_u(&b, 32); iw_bits_u(&b, 32); iw_bits_u(&b, 24); }
        if (level_present[i]) iw_bits_u(&b, 8);
    }
    iw_bits_ue(&b); /* sps_seq_parameter_set_id */
    if (iw_bits_ue(&b) == 3) iw_bits_u(&b, 1); /* separate_colour_plane_flag */
    uint32_t width = iw_bits_ue(&b), height = iw_bits_ue(&b);
    if (b.bad) return 0;
    *w = width;
    *h = height;
    return 1;
}

/* ISO/IEC 14496-15 8.3.3.1 HEVCDecoderConfigurationRecord: 22 bytes, then
   arrays of NAL units; each SPS (type 33) read. */
static void iw_hvcc_sizes(const uint8_t *p, size_t n, uint64_t *best, uint32_t *bw, uint32_t *bh) {
    if (n < 23) return;
    size_t pos = 23;
    unsigned arrays = p[22];
    for (unsigned a = 0; a < arrays && pos + 3 <= n; a++) {
        unsigned type = p[pos] & 0x3F, count = (unsigned)p[pos + 1] << 8 | p[pos + 2];
        pos += 3;
        for (unsigned k = 0; k < count && pos + 2 <= n; k++) {
            size_t length = (size_t)p[pos] << 8 | p[pos + 1];
            pos += 2;
            if (length > n - pos) return;
            uint32_t w = 0, h = 0;
            if (type == 33 && iw_hevc_sps_size(p + pos, length, &w, &h) && (uint64_t)w * h > *best) {
                *best = (uint64_t)w * h;
                *bw = w;
                *bh = h;
            }
            pos += length;
        }
    }
}

static void iw_take(uint64_t w, uint64_t h, uint64_t *best, uint32_t *bw, uint32_t *bh) {
    if (w * h > *best && w <= UINT32_MAX && h <= UINT32_MAX) {
        *best = w * h;
        *bw = (uint32_t)w;
        *bh = (uint32_t)h;
    }
}

/* The boxes of data[start, end) whose type is in the path's next step;
   at the path's end the leaf's payload is handed to iw_leaf. */
static void iw_sizes_in(const uint8_t *data, size_t start, size_t end, int depth, const char *parent,
                        uint64_t *best, uint32_t *bw, uint32_t *bh) {
    iw_box box;
    size_t pos = start;
    if (depth > 8) return;
    while (iw_bmff_box_at(data, end, pos, &box) == IW_BOX_OK) {
        const uint8_t *p = data + box.payload;
        size_t n = box.end - box.payload;
        pos = box.end;
        if (!memcmp(box.type, "meta", 4) && n >= 4) {
            iw_sizes_in(data, box.payload + 4, box.end, depth + 1, "meta", best, bw, bh);
        } else if (!memcmp(box.type, "iprp", 4) || !memcmp(box.type, "ipco", 4) || !memcmp(box.type, "moov", 4) ||
                   !memcmp(box.type, "trak", 4) || !memcmp(box.type, "mdia", 4) || !memcmp(box.type, "minf", 4) ||
                   !memcmp(box.type, "stbl", 4)) {
            iw_sizes_in(data, box.payload, box.end, depth + 1, box.type, best, bw, bh);
        } else if (!memcmp(box.type, "ispe", 4) && n >= 12) {
            iw_take(iw_be32(p + 4), iw_be32(p + 8), best, bw, bh);
        } else if (!memcmp(box.type, "hvcC", 4)) {
            iw_hvcc_sizes(p, n, best, bw, bh);
        } else if (!memcmp(box.type, "tkhd", 4) && n >= 4) {
            /* 16.16 fixed point, after 72 (version 0) or 84 bytes. */
            size_t at = p[0] == 1 ? 88 : 76;
            if (n >= at + 8) iw_take(iw_be32(p + at) >> 16, iw_be32(p + at + 4) >> 16, best, bw, bh);
        } else if (!memcmp(box.type, "stsd", 4) && n >= 8) {
            /* Visual sample entries: width and height at 24 and 26 of the
               entry's payload, child boxes (hvcC, av1C) from 78. */
            iw_box entry;
            size_t at = box.payload + 8;
            while (iw_bmff_box_at(data, box.end, at, &entry) == IW_BOX_OK) {
                const uint8_t *e = data + entry.payload;
                if (entry.end - entry.payload >= 78) {
                    iw_take((uint64_t)e[24] << 8 | e[25], (uint64_t)e[26] << 8 | e[27], best, bw, bh);
                    iw_sizes_in(data, entry.payload + 78, entry.end, depth + 1, "stsd", best, bw, bh);
                }
                at = entry.end;
            }
        }
        (void)parent;
    }
}

/* ---- A grid primary item: the canvas and the tiles it is made of -------

   ISO/IEC 23008-12 6.6.2.3 ImageGrid, the data of an item of type `grid`:
   version (0), flags (bit 0: 32-bit sizes), rows_minus_one,
   columns_minus_one, output_width, output_height. The decoders allocate
   that canvas and decode the tiles (the item's `dimg` references) into
   it, so a grid's size is the larger of its output size and its tiles'
   sizes (each tile's `ispe`, or the coded size in its `hvcC`, whichever
   is larger) laid out rows x columns. The `ispe` of the grid item itself
   is only a claim. Every read below is checked against the box it is in;
   a field that does not fit leaves the size at 0 (no claim). */

/* Reads an n-byte (0, 2, 4 or 8) big-endian field at *at of p[0, end);
   0 when it does not fit (then *ok is cleared). */
static uint64_t iw_field(const uint8_t *p, size_t end, size_t *at, unsigned n, int *ok) {
    if (n != 0 && n != 1 && n != 2 && n != 4 && n != 8) { *ok = 0; return 0; }
    if (*at > end || end - *at < n) { *ok = 0; *at = end; return 0; }
    uint64_t v = 0;
    for (unsigned k = 0; k < n; k++) v = v << 8 | p[*at + k];
    *at += n;
    return v;
}

/* The boxes of `meta` a grid is read from (payload spans in the data). */
typedef struct {
    const uint8_t *pitm, *iinf, *iloc, *idat, *iref, *ipco, *ipma;
    size_t pitm_n, iinf_n, iloc_n, idat_n, iref_n, ipco_n, ipma_n;
} iw_meta_boxes;

/* Upper bounds on the work done for a hostile file: entries read of
   `iinf`, `iloc` and `ipma`, properties of `ipco` an index may name, and
   tiles whose sizes are looked up (the spec wants every tile of a grid of
   one size, libavif refuses others; a larger tile further on is still
   charged by the walk of every `ispe` and `hvcC` above). */
#define IW_GRID_MAX_ITEMS 4096u
#define IW_GRID_MAX_PROPERTIES 256u
#define IW_GRID_SIZED_TILES 64u

/* `iprp` is read where the spec puts it, one level under `meta`; an
   `iprp` inside an `iprp` is not followed (a recursion a level a box
   deep: 8 bytes each, 100,000 levels in an 800 KB file overflowed the
   decoding thread's stack). */
static void iw_meta_find(const uint8_t *data, size_t start, size_t end, int in_iprp, iw_meta_boxes *m) {
    iw_box box;
    size_t pos = start;
    while (iw_bmff_box_at(data, end, pos, &box) == IW_BOX_OK) {
        const uint8_t *p = data + box.payload;
        size_t n = box.end - box.payload;
        pos = box.end;
        if (!memcmp(box.type, "pitm", 4)) { m->pitm = p; m->pitm_n = n; }
        else if (!memcmp(box.type, "iinf", 4)) { m->iinf = p; m->iinf_n = n; }
        else if (!memcmp(box.type, "iloc", 4)) { m->iloc = p; m->iloc_n = n; }
        else if (!memcmp(box.type, "idat", 4)) { m->idat = p; m->idat_n = n; }
        else if (!memcmp(box.type, "iref", 4)) { m->iref = p; m->iref_n = n; }
        else if (!memcmp(box.type, "iprp", 4) && !in_iprp) iw_meta_find(data, box.payload, box.end, 1, m);
        else if (!memcmp(box.type, "ipco", 4)) { m->ipco = p; m->ipco_n = n; }
        else if (!memcmp(box.type, "ipma", 4)) { m->ipma = p; m->ipma_n = n; }
    }
}

/* The type of item `id` from `iinf` (ISO/IEC 14496-12 8.11.6: entry_count
   of 16 bits in version 0, 32 in 1; `infe` version 2 has a 16-bit item_ID,
   3 a 32-bit one, then item_protection_index and item_type). */
static int iw_item_type(const iw_meta_boxes *m, uint32_t id, char type[4]) {
    if (!m->iinf || m->iinf_n < 6) return 0;
    size_t start = m->iinf[0] == 0 ? 6 : 8;
    iw_box box;
    size_t pos = start;
    unsigned seen = 0;
    while (seen++ < IW_GRID_MAX_ITEMS && iw_bmff_box_at(m->iinf, m->iinf_n, pos, &box) == IW_BOX_OK) {
        const uint8_t *p = m->iinf + box.payload;
        size_t n = box.end - box.payload;
        pos = box.end;
        if (memcmp(box.type, "infe", 4) || n < 4 || (p[0] != 2 && p[0] != 3)) continue;
        size_t at = 4;
        int ok = 1;
        uint32_t item = (uint32_t)iw_field(p, n, &at, p[0] == 2 ? 2 : 4, &ok);
        iw_field(p, n, &at, 2, &ok);
        if (!ok || n - at < 4) continue;
        if (item == id) {
            memcpy(type, p + at, 4);
            return 1;
        }
    }
    return 0;
}

/* The first extent of item `id` (ISO/IEC 14496-12 8.11.3 ItemLocationBox),
   from the file (construction_method 0) or `idat` (1), as a span of the
   data; 0 when it is not there whole. */
static int iw_item_data(const uint8_t *data, size_t len, const iw_meta_boxes *m, uint32_t id,
                        const uint8_t **out, size_t *out_n) {
    const uint8_t *p = m->iloc;
    size_t n = m->iloc_n, at = 4;
    if (!p || n < 8) return 0;
    int ok = 1;
    unsigned version = p[0];
    if (version > 2) return 0;
    unsigned sizes = (unsigned)iw_field(p, n, &at, 2, &ok);
    unsigned offset_size = sizes >> 12, length_size = (sizes >> 8) & 15, base_size = (sizes >> 4) & 15,
             index_size = version ? sizes & 15 : 0;
    uint32_t count = (uint32_t)iw_field(p, n, &at, version < 2 ? 2 : 4, &ok);
    for (uint32_t i = 0; ok && i < count && i < IW_GRID_MAX_ITEMS; i++) {
        uint32_t item = (uint32_t)iw_field(p, n, &at, version < 2 ? 2 : 4, &ok);
        unsigned method = version ? (unsigned)iw_field(p, n, &at, 2, &ok) & 15 : 0;
        iw_field(p, n, &at, 2, &ok); /* data_reference_index */
        uint64_t base = iw_field(p, n, &at, base_size, &ok);
        unsigned extents = (unsigned)iw_field(p, n, &at, 2, &ok);
        uint64_t first_offset = 0, first_length = 0;
        /* Fields of 0 bytes read nothing: one extent says all the others
           would (65,535 a item of 4,096 items cost a second of CPU). */
        if (index_size + offset_size + length_size == 0 && extents > 1) extents = 1;
        for (unsigned e = 0; ok && e < extents; e++) {
            iw_field(p, n, &at, index_size, &ok);
            uint64_t offset = iw_field(p, n, &at, offset_size, &ok), length = iw_field(p, n, &at, length_size, &ok);
            if (e == 0) { first_offset = offset; first_length = length; }
        }
        if (!ok || item != id) continue;
        if (extents == 0 || method > 1) return 0;
        const uint8_t *from = method == 0 ? data : m->idat;
        size_t room = method == 0 ? len : m->idat_n;
        if (!from || base > room || first_offset > room - base) return 0;
        uint64_t start = base + first_offset;
        /* A length of 0: to the end of the file (or idat). */
        uint64_t size = first_length ? first_length : room - start;
        if (size > room - start) return 0;
        *out = from + start;
        *out_n = (size_t)size;
        return 1;
    }
    return 0;
}

/* The items `from` references with type `type` (ISO/IEC 14496-12 8.11.12
   ItemReferenceBox: 16-bit IDs in version 0, 32-bit in 1), up to `max`. */
static unsigned iw_item_refs(const iw_meta_boxes *m, uint32_t from, const char *type, uint32_t *to, unsigned max) {
    if (!m->iref || m->iref_n < 4) return 0;
    unsigned wide = m->iref[0] != 0 ? 4 : 2, found = 0;
    iw_box box;
    size_t pos = 4;
    while (iw_bmff_box_at(m->iref, m->iref_n, pos, &box) == IW_BOX_OK) {
        const uint8_t *p = m->iref + box.payload;
        size_t n = box.end - box.payload, at = 0;
        pos = box.end;
        int ok = 1;
        uint32_t item = (uint32_t)iw_field(p, n, &at, wide, &ok);
        unsigned count = (unsigned)iw_field(p, n, &at, 2, &ok);
        if (!ok || memcmp(box.type, type, 4) || item != from) continue;
        for (unsigned k = 0; k < count && found < max; k++) {
            uint32_t id = (uint32_t)iw_field(p, n, &at, wide, &ok);
            if (!ok) break;
            to[found++] = id;
        }
        return found;
    }
    return 0;
}

/* The largest size item `id`'s properties give (ispe, hvcC), through
   `ipma` (ISO/IEC 23008-12 9.3.2: item_ID of 16 bits in version 0, 32 in
   1; property indices of 7 bits, or 15 with flags bit 0, 1-based into
   `ipco`). */
static void iw_item_size(const iw_meta_boxes *m, const iw_box *props, unsigned prop_count, uint32_t id,
                         uint32_t *w, uint32_t *h) {
    *w = *h = 0;
    const uint8_t *p = m->ipma;
    size_t n = m->ipma_n, at = 4;
    if (!p || n < 8 || !m->ipco) return;
    int ok = 1, wide_index = p[3] & 1;
    unsigned id_size = p[0] ? 4 : 2;
    uint32_t entries = (uint32_t)iw_field(p, n, &at, 4, &ok);
    for (uint32_t e = 0; ok && e < entries && e < IW_GRID_MAX_ITEMS; e++) {
        uint32_t item = (uint32_t)iw_field(p, n, &at, id_size, &ok);
        unsigned count = (unsigned)iw_field(p, n, &at, 1, &ok);
        for (unsigned k = 0; ok && k < count; k++) {
            unsigned index = (unsigned)iw_field(p, n, &at, wide_index ? 2 : 1, &ok) & (wide_index ? 0x7FFF : 0x7F);
            if (item != id || index == 0 || index > prop_count) continue;
            const iw_box *box = &props[index - 1];
            const uint8_t *q = m->ipco + box->payload;
            size_t qn = box->end - box->payload;
            uint64_t best = (uint64_t)*w * *h;
            if (!memcmp(box->type, "ispe", 4) && qn >= 12) iw_take(iw_be32(q + 4), iw_be32(q + 8), &best, w, h);
            else if (!memcmp(box->type, "hvcC", 4)) iw_hvcc_sizes(q, qn, &best, w, h);
        }
        if (item == id) return;
    }
}

/* The size a grid primary item is decoded at (its output, or its tiles
   laid out, whichever is larger) and its tile count; 0x0 and 0 when the
   primary item is no grid. */
static void iw_grid_size(const uint8_t *data, size_t len, uint32_t *gw, uint32_t *gh, uint32_t *tile_count) {
    *gw = *gh = 0;
    *tile_count = 0;
    iw_box box;
    size_t pos = 0;
    while (iw_bmff_box_at(data, len, pos, &box) == IW_BOX_OK && memcmp(box.type, "meta", 4)) pos = box.end;
    if (memcmp(box.type, "meta", 4) || box.end - box.payload < 4) return;
    iw_meta_boxes m;
    memset(&m, 0, sizeof m);
    iw_meta_find(data, box.payload + 4, box.end, 0, &m);
    if (!m.pitm || m.pitm_n < 6) return;
    uint32_t primary = m.pitm[0] == 0 ? (uint32_t)m.pitm[4] << 8 | m.pitm[5]
                                      : (m.pitm_n >= 8 ? iw_be32(m.pitm + 4) : 0);
    char type[4];
    const uint8_t *g;
    size_t gn;
    if (!iw_item_type(&m, primary, type) || memcmp(type, "grid", 4) ||
        !iw_item_data(data, len, &m, primary, &g, &gn) || gn < 8)
        return;
    unsigned rows = g[2] + 1u, columns = g[3] + 1u;
    *tile_count = rows * columns;
    uint64_t best = 0;
    if (g[1] & 1) {
        if (gn >= 12) iw_take(iw_be32(g + 4), iw_be32(g + 8), &best, gw, gh);
    } else {
        iw_take((uint64_t)g[4] << 8 | g[5], (uint64_t)g[6] << 8 | g[7], &best, gw, gh);
    }
    /* The properties of ipco, in order (ipma names them by index). */
    iw_box props[IW_GRID_MAX_PROPERTIES];
    unsigned prop_count = 0;
    size_t at = 0;
    while (m.ipco && prop_count < IW_GRID_MAX_PROPERTIES &&
           iw_bmff_box_at(m.ipco, m.ipco_n, at, &props[prop_count]) == IW_BOX_OK)
        at = props[prop_count++].end;
    /* The tiles: the largest one's sides, rows x columns of it. */
    uint32_t tiles[IW_GRID_SIZED_TILES];
    unsigned count = iw_item_refs(&m, primary, "dimg", tiles, IW_GRID_SIZED_TILES);
    uint32_t tw = 0, th = 0;
    for (unsigned k = 0; k < count; k++) {
        uint32_t w = 0, h = 0;
        iw_item_size(&m, props, prop_count, tiles[k], &w, &h);
        if (w > tw) tw = w;
        if (h > th) th = h;
    }
    iw_take((uint64_t)tw * columns, (uint64_t)th * rows, &best, gw, gh);
}

void iw_bmff_largest_coded_size(const uint8_t *data, size_t len, uint32_t *width, uint32_t *height) {
    uint64_t best = 0;
    *width = 0;
    *height = 0;
    iw_sizes_in(data, 0, len, 0, "", &best, width, height);
    uint32_t gw = 0, gh = 0, tiles = 0;
    iw_grid_size(data, len, &gw, &gh, &tiles);
    iw_take(gw, gh, &best, width, height);
}

uint32_t iw_bmff_grid_tiles(const uint8_t *data, size_t len) {
    uint32_t gw = 0, gh = 0, tiles = 0;
    iw_grid_size(data, len, &gw, &gh, &tiles);
    return tiles;
}

/* ---- What libavif's parse allocates for the items (iw_bmff_item_counts) */

void iw_bmff_item_counts(const uint8_t *data, size_t len, uint64_t *items, uint64_t *extents) {
    *items = *extents = 0;
    iw_box box;
    size_t pos = 0;
    int r;
    while ((r = iw_bmff_box_at(data, len, pos, &box)) == IW_BOX_OK && memcmp(box.type, "meta", 4)) pos = box.end;
    if (r != IW_BOX_OK || box.end - box.payload < 4) return;
    iw_meta_boxes m;
    memset(&m, 0, sizeof m);
    iw_meta_find(data, box.payload + 4, box.end, 0, &m);
    /* iinf: the `infe` boxes there are, up to its entry_count. */
    if (m.iinf && m.iinf_n >= 6) {
        uint64_t declared = m.iinf[0] == 0 ? (uint64_t)m.iinf[4] << 8 | m.iinf[5] : (m.iinf_n >= 8 ? iw_be32(m.iinf + 4) : 0);
        size_t at = m.iinf[0] == 0 ? 6 : 8;
        iw_box b;
        uint64_t n = 0;
        while (n < declared && iw_bmff_box_at(m.iinf, m.iinf_n, at, &b) == IW_BOX_OK) {
            n++;
            at = b.end;
        }
        *items += n;
    }
    /* iloc: each item entry that fits, and its extents (all of them when
       their fields are 0 bytes wide, else those that fit). Every entry
       takes at least 6 bytes: the walk is linear in the box. */
    if (m.iloc && m.iloc_n >= 8 && m.iloc[0] <= 2) {
        const uint8_t *p = m.iloc;
        size_t n = m.iloc_n, at = 4;
        int ok = 1;
        unsigned version = p[0];
        unsigned sizes = (unsigned)iw_field(p, n, &at, 2, &ok);
        unsigned offset_size = sizes >> 12, length_size = (sizes >> 8) & 15, base_size = (sizes >> 4) & 15,
                 index_size = version ? sizes & 15 : 0;
        unsigned width = offset_size + length_size + index_size;
        uint32_t count = (uint32_t)iw_field(p, n, &at, version < 2 ? 2 : 4, &ok);
        for (uint32_t i = 0; ok && i < count; i++) {
            iw_field(p, n, &at, version < 2 ? 2 : 4, &ok);
            if (version) iw_field(p, n, &at, 2, &ok);
            iw_field(p, n, &at, 2, &ok);
            iw_field(p, n, &at, base_size, &ok);
            uint64_t listed = iw_field(p, n, &at, 2, &ok);
            if (!ok) break;
            *items += 1;
            uint64_t fit = width ? (n - at) / width : listed;
            uint64_t taken = listed < fit ? listed : fit;
            *extents += taken;
            at += (size_t)(taken * width);
        }
    }
    /* ipma: each entry that fits (at least 3 bytes each). */
    if (m.ipma && m.ipma_n >= 8) {
        const uint8_t *p = m.ipma;
        size_t n = m.ipma_n, at = 4;
        int ok = 1;
        unsigned wide = p[3] & 1, id_size = p[0] ? 4 : 2;
        uint32_t entries = (uint32_t)iw_field(p, n, &at, 4, &ok);
        for (uint32_t e = 0; ok && e < entries; e++) {
            iw_field(p, n, &at, id_size, &ok);
            uint64_t associations = iw_field(p, n, &at, 1, &ok) * (wide ? 2 : 1);
            if (!ok || associations > n - at) break;
            *items += 1;
            at += (size_t)associations;
        }
    }
    /* iref: the item a reference is from and each it names. */
    if (m.iref && m.iref_n >= 4) {
        size_t wide = m.iref[0] != 0 ? 4 : 2, at = 4;
        iw_box b;
        while (iw_bmff_box_at(m.iref, m.iref_n, at, &b) == IW_BOX_OK) {
            size_t n = b.end - b.payload;
            *items += 1 + (n >= wide + 2 ? (n - wide - 2) / wide : 0);
            at = b.end;
        }
    }
}
