/* Walks over the boxes of an ISO-BMFF file (AVIF, HEIF). The top-level walk
   explains a failure the library reported: libheif calls a `meta` box cut
   short "No 'meta' box" and libavif a cut `mdat` "BMFF parsing failed",
   where the cause is the data ending early. The sequence check below judges
   what libheif does not read at all. Not part of the module's API. */
#ifndef IMGWARM_BMFF_H
#define IMGWARM_BMFF_H
#include "internal.h"

/* Returns 1 and describes the box in reason when a top-level box claims
   more bytes than the data has left (or its header itself is cut). */
static inline int iw_bmff_cut_box(const uint8_t *data, size_t len, iw_result *out) {
    iw_box box;
    size_t pos = 0;
    int r;
    while ((r = iw_bmff_box_at(data, len, pos, &box)) == IW_BOX_OK) pos = box.end;
    char type[5] = {0};
    for (int i = 0; i < 4; i++) {
        uint8_t c = (uint8_t)box.type[i];
        type[i] = (c >= 0x20 && c < 0x7F) ? (char)c : '?';
    }
    switch (r) {
    case IW_BOX_HEADER_CUT:
        iw_set_reason(out, "premature end of data in a box header at byte %zu", pos);
        return 1;
    case IW_BOX_LARGESIZE_CUT:
        iw_set_reason(out, "premature end of data in the header of box '%s' at byte %zu", type, pos);
        return 1;
    case IW_BOX_PAST_END:
        iw_set_reason(out, "premature end of data in box '%s' at byte %zu (%llu bytes, %zu left)",
                      type, pos, (unsigned long long)box.size, len - pos);
        return 1;
    default:
        /* The end, or a malformed size: not a cut, the library said why. */
        return 0;
    }
}

/* --- Image sequences: every sample of every track inside the data ------

   libheif 1.15 reads the `meta` items only, so a .heics (an HEVC image
   sequence in `moov` tracks, which SDWebImage shows animated) cut short
   after its primary image would pass on that image. This walk checks what
   the container can say without decoding HEVC: every top-level box ends
   inside the data (a box that runs past the end is a cut file), and in
   every `moov/trak/mdia/minf/stbl`, each sample located by its chunk
   offset (`stco` or `co64`), its place in the chunk (`stsc`) and its size
   (`stsz`) lies inside the data (ISO/IEC 14496-12 8.7.3-8.7.5). What it
   does not do: decode the samples (libde265 could, from the `hvcC`
   parameter sets; not done here). */

typedef struct {
    const uint8_t *data;
    size_t len;
} iw_bmff_span;

/* The child box of `type` in parent[start, end), or {NULL, 0}. Children
   that run past their parent end the search (the caller's walk already
   judged the top level). */
static inline iw_bmff_span iw_bmff_child(const uint8_t *p, size_t n, const char *type, size_t skip) {
    iw_box box;
    size_t pos = skip;
    while (iw_bmff_box_at(p, n, pos, &box) == IW_BOX_OK) {
        if (memcmp(box.type, type, 4) == 0) return (iw_bmff_span){p + box.payload, box.end - box.payload};
        pos = box.end;
    }
    return (iw_bmff_span){NULL, 0};
}

static inline uint64_t iw_be64(const uint8_t *p) { return ((uint64_t)iw_be32(p) << 32) | iw_be32(p + 4); }

/* One track's sample table: 0 when every sample lies inside the data,
   else IW_TRUNCATED or IW_CORRUPT with the reason set. */
static inline int iw_bmff_track_samples(iw_bmff_span stbl, size_t len, unsigned track, iw_result *out) {
    iw_bmff_span stsz = iw_bmff_child(stbl.data, stbl.len, "stsz", 0);
    iw_bmff_span stsc = iw_bmff_child(stbl.data, stbl.len, "stsc", 0);
    iw_bmff_span stco = iw_bmff_child(stbl.data, stbl.len, "stco", 0);
    int wide = 0;
    if (!stco.data) {
        stco = iw_bmff_child(stbl.data, stbl.len, "co64", 0);
        wide = 1;
    }
    if (!stsz.data && !stsc.data && !stco.data) return 0; /* no samples (e.g. a fragmented file's empty table) */
    if (!stsz.data || !stsc.data || !stco.data || stsz.len < 12 || stsc.len < 8 || stco.len < 8) {
        iw_set_reason(out, "track %u: sample table without stsz, stsc and stco", track);
        return IW_CORRUPT;
    }
    uint32_t fixed = iw_be32(stsz.data + 4), samples = iw_be32(stsz.data + 8);
    if (fixed == 0 && samples > (stsz.len - 12) / 4) {
        iw_set_reason(out, "track %u: stsz lists %u samples in %zu bytes", track, samples, stsz.len);
        return IW_CORRUPT;
    }
    uint32_t runs = iw_be32(stsc.data + 4), chunks = iw_be32(stco.data + 4);
    if (runs > (stsc.len - 8) / 12 || chunks > (stco.len - 8) / (wide ? 8 : 4)) {
        iw_set_reason(out, "track %u: stsc or %s lists more entries than it holds", track, wide ? "co64" : "stco");
        return IW_CORRUPT;
    }
    uint32_t sample = 0; /* samples placed so far */
    for (uint32_t run = 0; run < runs && sample < samples; run++) {
        const uint8_t *e = stsc.data + 8 + 12 * (size_t)run;
        uint32_t first = iw_be32(e), per_chunk = iw_be32(e + 4);
        uint32_t next = run + 1 < runs ? iw_be32(e + 12) : chunks + 1;
        if (first == 0 || next < first || next > chunks + 1) {
            iw_set_reason(out, "track %u: stsc run %u starts at chunk %u of %u", track, run + 1, first, chunks);
            return IW_CORRUPT;
        }
        for (uint32_t chunk = first; chunk < next && sample < samples; chunk++) {
            uint64_t at = wide ? iw_be64(stco.data + 8 + 8 * (size_t)(chunk - 1)) : iw_be32(stco.data + 4 + 4 * (size_t)chunk);
            uint32_t in_chunk = per_chunk < samples - sample ? per_chunk : samples - sample;
            /* Bytes from the chunk's start to the end of the data; the
               chunk's samples must fit in them. */
            uint64_t room = at <= len ? len - at : 0, need = 0;
            uint32_t first_sample = sample + 1;
            if (fixed) {
                /* A constant size: the chunk in one step (no overflow:
                   both factors are below 2^32). */
                need = (uint64_t)fixed * in_chunk;
                sample += in_chunk;
            } else {
                for (uint32_t k = 0; k < in_chunk && need <= room; k++, sample++)
                    need += iw_be32(stsz.data + 12 + 4 * (size_t)sample);
            }
            if (at > len || need > room) {
                iw_set_reason(out, "track %u: chunk %u (samples %u-%u at byte %llu) ends past the end of the data (%zu bytes)",
                              track, chunk, first_sample, first_sample + in_chunk - 1, (unsigned long long)at, len);
                return IW_TRUNCATED;
            }
        }
    }
    if (sample < samples) {
        iw_set_reason(out, "track %u: stsz lists %u samples, the chunks hold %u", track, samples, sample);
        return IW_CORRUPT;
    }
    return 0;
}

/* Every top-level box whole, and every sample of every `moov` track inside
   the data: IW_OK, or IW_TRUNCATED / IW_CORRUPT with the reason set. */
static inline int iw_bmff_sequence_check(const uint8_t *data, size_t len, iw_result *out) {
    if (iw_bmff_cut_box(data, len, out)) return IW_TRUNCATED;
    iw_bmff_span moov = iw_bmff_child(data, len, "moov", 0);
    if (!moov.data) return IW_OK;
    unsigned track = 0;
    size_t pos = 0;
    /* Each trak in turn: iw_bmff_child from past the previous one. */
    for (;;) {
        iw_bmff_span trak = iw_bmff_child(moov.data, moov.len, "trak", pos);
        if (!trak.data) break;
        track++;
        pos = (size_t)(trak.data + trak.len - moov.data);
        iw_bmff_span mdia = iw_bmff_child(trak.data, trak.len, "mdia", 0);
        iw_bmff_span minf = mdia.data ? iw_bmff_child(mdia.data, mdia.len, "minf", 0) : mdia;
        iw_bmff_span stbl = minf.data ? iw_bmff_child(minf.data, minf.len, "stbl", 0) : minf;
        if (!stbl.data) continue;
        int status = iw_bmff_track_samples(stbl, len, track, out);
        if (status) return status;
    }
    return IW_OK;
}
#endif
