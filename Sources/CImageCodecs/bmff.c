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

void iw_bmff_largest_coded_size(const uint8_t *data, size_t len, uint32_t *width, uint32_t *height) {
    uint64_t best = 0;
    *width = 0;
    *height = 0;
    iw_sizes_in(data, 0, len, 0, "", &best, width, height);
}
