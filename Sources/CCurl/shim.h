#ifndef IMGWARM_CCURL_SHIM_H
#define IMGWARM_CCURL_SHIM_H
/* curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic,
 * which Swift cannot call: one typed wrapper per argument kind. */
#include <curl/curl.h>

typedef size_t (*imgwarm_curl_data_cb)(char *, size_t, size_t, void *);
typedef int (*imgwarm_curl_xferinfo_cb)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t);

static inline CURLcode imgwarm_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode imgwarm_easy_setopt_ptr(CURL *h, CURLoption o, const void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode imgwarm_easy_setopt_str(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode imgwarm_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode imgwarm_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode imgwarm_easy_setopt_datacb(CURL *h, CURLoption o, imgwarm_curl_data_cb v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode imgwarm_easy_setopt_xferinfocb(CURL *h, CURLoption o, imgwarm_curl_xferinfo_cb v) { return curl_easy_setopt(h, o, v); }

static inline CURLcode imgwarm_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode imgwarm_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode imgwarm_easy_getinfo_double(CURL *h, CURLINFO i, double *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode imgwarm_easy_getinfo_str(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode imgwarm_easy_getinfo_ptr(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }

static inline CURLMcode imgwarm_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
static inline CURLSHcode imgwarm_share_setopt_long(CURLSH *s, CURLSHoption o, long v) { return curl_share_setopt(s, o, v); }
static inline CURLcode imgwarm_easy_setopt_share(CURL *h, CURLSH *s) { return curl_easy_setopt(h, CURLOPT_SHARE, s); }

/* A gzip or zlib (`deflate`) body inflated by the write callback itself,
 * not by libcurl: libcurl inflates a whole read before it calls the
 * callback and keeps the inflated rest in memory when the callback pauses,
 * so a few KB on the wire could hold up to --max-bytes each outside the
 * memory budget. inflateInit2 is a macro: wrapped here. 15 + 32: a zlib or
 * a gzip header, detected. */
#include <zlib.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
static inline z_stream *imgwarm_inflater_new(void) {
    z_stream *z = calloc(1, sizeof *z);
    if (z && inflateInit2(z, 15 + 32) != Z_OK) { free(z); return NULL; }
    return z;
}
static inline void imgwarm_inflater_free(z_stream *z) {
    if (z) { inflateEnd(z); free(z); }
}
/* One inflate step from `in` into `out`: what was consumed and produced, and
 * zlib's return code (Z_OK, Z_STREAM_END, Z_BUF_ERROR: no progress possible,
 * Z_DATA_ERROR...). */
static inline int imgwarm_inflate(z_stream *z, const unsigned char *in, size_t in_len, size_t *consumed,
                                  unsigned char *out, size_t out_cap, size_t *produced) {
    z->next_in = (unsigned char *)in;
    z->avail_in = (uInt)in_len;
    z->next_out = out;
    z->avail_out = (uInt)out_cap;
    int r = inflate(z, Z_NO_FLUSH);
    *consumed = in_len - z->avail_in;
    *produced = out_cap - z->avail_out;
    return r;
}

/* CURL_GLOBAL_ALL is a macro expression; call it from C so Swift needs no
 * copy of its value. */
static inline CURLcode imgwarm_global_init(void) { return curl_global_init(CURL_GLOBAL_ALL); }

/* --limit-rate: a write callback's "keep these bytes, pause receiving", and
 * the call that resumes the transfer (both macro expressions in curl.h). */
static inline size_t imgwarm_writefunc_pause(void) { return CURL_WRITEFUNC_PAUSE; }
static inline CURLcode imgwarm_easy_resume(CURL *h) { return curl_easy_pause(h, CURLPAUSE_CONT); }

/* The value of response header `name` of the last request of a transfer
 * (after redirects), or NULL. The pointer lives until the next transfer on
 * the handle; copy it at once. */
static inline const char *imgwarm_easy_header_value(CURL *h, const char *name) {
    struct curl_header *header = NULL;
    if (curl_easy_header(h, name, 0, CURLH_HEADER, -1, &header) == CURLHE_OK && header != NULL)
        return header->value;
    return NULL;
}

/* The response headers a stored response keeps (`CurlTransfer.finish`),
 * and the Content-Encoding the write callback checks on a body's first
 * bytes (asked of curl_easy_header, it cost about 950 instructions a file),
 * collected as libcurl hands each header line to CURLOPT_HEADERFUNCTION:
 * curl_easy_header walks the whole header list for every name asked (about
 * 650 instructions a name). values[i] is a copy of the first header named
 * imgwarm_kept_names[i] (ASCII case ignored, value without surrounding
 * blanks) of the last response: a status line starts over (a redirect hop,
 * a 1xx, a proxy's CONNECT answer), and lines after the blank line that
 * ends the headers (trailers) are left out, as CURLH_HEADER leaves them.
 * A value folded onto a continuation line (obsolete since RFC 7230) keeps
 * its first line only. */
enum { IMGWARM_KEPT_HEADER_COUNT = 8 };
typedef struct {
    char *values[IMGWARM_KEPT_HEADER_COUNT];
    int ended;
} imgwarm_kept_headers;
static const char *const imgwarm_kept_names[IMGWARM_KEPT_HEADER_COUNT] = {
    "ETag", "Last-Modified", "Vary", "Cache-Control", "Expires", "Date", "Age", "Content-Encoding" };
static inline void imgwarm_kept_headers_clear(imgwarm_kept_headers *k) {
    for (int i = 0; i < IMGWARM_KEPT_HEADER_COUNT; i++) { free(k->values[i]); k->values[i] = NULL; }
    k->ended = 0;
}
static inline const char *imgwarm_kept_header(const imgwarm_kept_headers *k, int i) { return k->values[i]; }
static size_t imgwarm_kept_headers_line(char *line, size_t size, size_t count, void *context) {
    size_t length = size * count;
    imgwarm_kept_headers *k = context;
    if (k == NULL || length == 0) return length;
    if (length >= 5 && memcmp(line, "HTTP/", 5) == 0) { imgwarm_kept_headers_clear(k); return length; }
    if (line[0] == '\r' || line[0] == '\n') { k->ended = 1; return length; }
    if (k->ended) return length;
    const char *colon = memchr(line, ':', length);
    if (colon == NULL) return length;
    size_t nameLength = (size_t)(colon - line);
    /* Most lines name none of them: length and first letter rule them out. */
    static const unsigned char lengths[IMGWARM_KEPT_HEADER_COUNT] = { 4, 13, 4, 13, 7, 4, 3, 16 };
    char first = (char)(line[0] | 0x20);
    for (int i = 0; i < IMGWARM_KEPT_HEADER_COUNT; i++) {
        const char *name = imgwarm_kept_names[i];
        if (lengths[i] != nameLength || (name[0] | 0x20) != first || strncasecmp(line, name, nameLength) != 0) continue;
        if (k->values[i] != NULL) break;
        const char *v = colon + 1, *end = line + length;
        while (v < end && (*v == ' ' || *v == '\t')) v++;
        while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t')) end--;
        k->values[i] = strndup(v, (size_t)(end - v));
        /* Out of memory: the header reads as absent. */
        break;
    }
    return length;
}
static inline CURLcode imgwarm_easy_keep_headers(CURL *h) {
    return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, imgwarm_kept_headers_line);
}

/* libcurl's URL API (curl_url): its flags are macros; the few combinations
 * imgwarm uses are chosen here. `lenient` also takes what a transfer would
 * not (other schemes, spaces, raw non-ASCII): for finding credentials in
 * arbitrary text, never for deciding what to fetch. */
static inline CURLUcode imgwarm_url_set(CURLU *u, const char *text, int lenient) {
    unsigned int flags = lenient ? (CURLU_NON_SUPPORT_SCHEME | CURLU_URLENCODE | CURLU_ALLOW_SPACE) : 0;
    return curl_url_set(u, CURLUPART_URL, text, flags);
}
/* A part as written in the URL (not decoded); the port with the scheme's
 * default when the URL names none. */
static inline CURLUcode imgwarm_url_get(CURLU *u, CURLUPart part, char **out) {
    return curl_url_get(u, part, out, part == CURLUPART_PORT ? CURLU_DEFAULT_PORT : 0);
}

/* CURLMsg.data is a union; read its result member here. */
static inline CURLcode imgwarm_msg_result(const CURLMsg *m) { return m->data.result; }

/* The TLS session of a transfer's connection (OpenSSL builds of libcurl:
 * CURLINFO_TLS_SSL_PTR gives the SSL pointer while the connection is
 * attached, so call these from the write callback): what OkHttp's cache
 * records of a handshake. The cipher suite by its IANA name
 * (SSL_CIPHER_standard_name, the name Java uses) and the protocol as
 * OpenSSL names it ("TLSv1.2", "TLSv1.3", Java's names too). 0 when there
 * is no OpenSSL session. */
#include <openssl/ssl.h>
#include <openssl/x509.h>
static inline SSL *imgwarm_tls_session(CURL *h) {
    struct curl_tlssessioninfo *info = NULL;
    if (curl_easy_getinfo(h, CURLINFO_TLS_SSL_PTR, &info) != CURLE_OK || info == NULL) return NULL;
    if (info->backend != CURLSSLBACKEND_OPENSSL || info->internals == NULL) return NULL;
    return (SSL *)info->internals;
}
static inline const char *imgwarm_tls_cipher_name(CURL *h) {
    SSL *ssl = imgwarm_tls_session(h);
    const SSL_CIPHER *cipher = ssl ? SSL_get_current_cipher(ssl) : NULL;
    return cipher ? SSL_CIPHER_standard_name(cipher) : NULL;
}
static inline const char *imgwarm_tls_version_name(CURL *h) {
    SSL *ssl = imgwarm_tls_session(h);
    return ssl ? SSL_get_version(ssl) : NULL;
}
/* The peer's certificate chain as the server sent it; -1 without one. */
static inline int imgwarm_tls_peer_cert_count(CURL *h) {
    SSL *ssl = imgwarm_tls_session(h);
    STACK_OF(X509) *chain = ssl ? SSL_get_peer_cert_chain(ssl) : NULL;
    return chain ? sk_X509_num(chain) : -1;
}
/* Certificate `i` of that chain, DER, into a buffer the caller frees with
 * imgwarm_tls_free; its length, or -1. */
static inline int imgwarm_tls_peer_cert_der(CURL *h, int i, unsigned char **out) {
    SSL *ssl = imgwarm_tls_session(h);
    STACK_OF(X509) *chain = ssl ? SSL_get_peer_cert_chain(ssl) : NULL;
    if (chain == NULL || i < 0 || i >= sk_X509_num(chain)) return -1;
    *out = NULL;
    return i2d_X509(sk_X509_value(chain, i), out);
}
static inline void imgwarm_tls_free(unsigned char *p) { OPENSSL_free(p); }
#endif
